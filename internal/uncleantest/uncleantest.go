// Package uncleantest checks in tests how a server answers a request
// whose path is not clean ("//api/v4/trust"), sent as curl without -L
// sends it: a client that does not follow redirects.
package uncleantest

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"
)

// Post posts the JSON body to path, written as it is, on the server at
// base, with the header name, value pairs given, by a client that does
// not follow redirects, and returns the status, the Location header and
// the body of the answer. It fails t when the request cannot be sent.
func Post(t testing.TB, base, path, body string, headers ...string) (status int, location, answer string) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, base, strings.NewReader(body))
	if err != nil {
		t.Fatalf("uncleantest: %v", err)
	}
	// Set apart from base: a URL string "http://host//api" is read as
	// written, but one whose path starts the string would not be.
	req.URL.Path, req.URL.RawPath = path, ""
	req.Header.Set("Content-Type", "application/json")
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Add(headers[i], headers[i+1])
	}
	hc := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatalf("uncleantest: POST %s: %v", path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatalf("uncleantest: POST %s: %v", path, err)
	}
	return resp.StatusCode, resp.Header.Get("Location"), string(data)
}

// NotFound posts body to path as [Post] does and reports an error on t
// unless the answer is a 404 problem with the code not_found whose
// detail ends "did you mean <clean>?".
func NotFound(t testing.TB, base, path, clean, body string, headers ...string) {
	t.Helper()
	status, location, answer := Post(t, base, path, body, headers...)
	var p struct{ Code, Detail string }
	if err := json.Unmarshal([]byte(answer), &p); err != nil || status != http.StatusNotFound || location != "" ||
		p.Code != "not_found" || !strings.HasSuffix(p.Detail, "did you mean "+clean+"?") {
		t.Errorf("POST %s = %d (Location %q) %s, want a 404 not_found problem naming %s", path, status, location, answer, clean)
	}
}
