package router_test

import (
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/problem"
)

// TestHandler_manyFieldErrors sends bodies with fifty thousand wrong
// elements or members over loopback, to the anonymous trial route among
// others: each answers 400
// with the first problem.MaxFieldErrors field errors and one more that
// counts the others, in a body a small fraction of the request's size.
func TestHandler_manyFieldErrors(t *testing.T) {
	srv, rec := newKeyedHandler(t)
	const n = 50_000
	for _, c := range []struct {
		name, path, body string
		first            string // the field of the first error
	}{
		{"empty tools", "/api/v2/trial/delegate",
			`{"session_id":1,"objective":"x","input":"y","execution":{"tools":[` + strings.TrimSuffix(strings.Repeat(`"",`, n), ",") + `]}}`,
			"execution.tools[0]"},
		{"unknown pool sessions", "/api/v3/validate",
			`{"claim":{"type":"summary","output":"x"},"consensus":{"replicas":1,"session_pool":[` + unknownSessions(n) + `]}}`,
			"consensus.session_pool[0]"},
		{"unknown members", "/api/v3/validate",
			`{"claim":{"type":"summary","output":"x"},"consensus":{"replicas":1` + unknownMembers(n) + `}}`,
			"consensus.m0"},
	} {
		req, err := http.NewRequest(http.MethodPost, srv.URL+c.path, strings.NewReader(c.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		if !strings.Contains(c.path, "/trial/") {
			req.Header.Set("Authorization", "Bearer k")
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("%s: status %d, want 400 (%.300s)", c.name, resp.StatusCode, raw)
			continue
		}
		if len(raw) > len(c.body)/4 {
			t.Errorf("%s: a body of %d bytes got an answer of %d bytes", c.name, len(c.body), len(raw))
		}
		var p problem.Details
		if err := json.Unmarshal(raw, &p); err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if len(p.Errors) != problem.MaxFieldErrors+1 {
			t.Errorf("%s: %d field errors, want %d", c.name, len(p.Errors), problem.MaxFieldErrors+1)
			continue
		}
		if p.Errors[0].Field != c.first {
			t.Errorf("%s: first error names %q, want %q", c.name, p.Errors[0].Field, c.first)
		}
		last := p.Errors[problem.MaxFieldErrors]
		want := fmt.Sprintf("%d more field errors were found and not listed", n-problem.MaxFieldErrors)
		if last.Rule != problem.RuleUnlisted || last.Message != want {
			t.Errorf("%s: last error %+v, want rule %q, message %q", c.name, last, problem.RuleUnlisted, want)
		}
		if len(p.Detail) > 2000 {
			t.Errorf("%s: detail of %d bytes", c.name, len(p.Detail))
		}
	}
	if got := rec.Calls.Load(); got != 0 {
		t.Errorf("the refused bodies ran %d jobs", got)
	}
}

// unknownMembers returns n members no request has, each after a comma.
func unknownMembers(n int) string {
	var b strings.Builder
	for i := range n {
		fmt.Fprintf(&b, `,"m%d":0`, i)
	}
	return b.String()
}

// unknownSessions returns n session ids, none of a session of the test
// router, separated by commas.
func unknownSessions(n int) string {
	ids := make([]string, n)
	for i := range ids {
		ids[i] = fmt.Sprint(100_000 + i)
	}
	return strings.Join(ids, ",")
}
