package router_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

// badInputCase is one hostile request and the answer it must get.
type badInputCase struct {
	name    string
	path    string
	header  map[string]string // replaces the defaults (JSON, the test key)
	body    string
	status  int
	code    string
	field   string // the JSON path a field error must name, or ""
	chunked bool   // send without Content-Length
}

// problemAnswer is the RFC 9457 body the tests read.
type problemAnswer struct {
	Type, Title, Code, Detail, Instance string
	Status                              int
	RequestID                           string `json:"request_id"`
	Errors                              []struct{ Field, Rule, Message string }
}

// sendBad sends c to srv and checks the answer: the wanted status and
// code in an application/problem+json body that repeats the status and
// names the field, never a 500.
func sendBad(t *testing.T, srv *httptest.Server, c badInputCase) {
	t.Helper()
	var body io.Reader = strings.NewReader(c.body)
	if c.chunked {
		body = io.MultiReader(body) // hides the length: sent chunked
	}
	req, err := http.NewRequest(http.MethodPost, srv.URL+c.path, body)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer k")
	req.Header.Set("Idempotency-Key", "bad-input-"+strings.ReplaceAll(c.name, " ", "-"))
	for k, v := range c.header {
		if v == "" {
			req.Header.Del(k)
		} else {
			req.Header.Set(k, v)
		}
	}
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatalf("%s: %v", c.name, err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != c.status {
		t.Errorf("%s: status %d (%s), want %d", c.name, resp.StatusCode, raw, c.status)
		return
	}
	if ct := resp.Header.Get("Content-Type"); ct != "application/problem+json" {
		t.Errorf("%s: Content-Type %q, want application/problem+json", c.name, ct)
	}
	var p problemAnswer
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatalf("%s: body %s is not a problem: %v", c.name, raw, err)
	}
	if p.Status != c.status || p.Code != c.code || p.Title == "" || p.RequestID == "" {
		t.Errorf("%s: problem %+v, want status %d, code %s, a title and a request id", c.name, p, c.status, c.code)
	}
	if c.field != "" && (len(p.Errors) == 0 || p.Errors[0].Field != c.field || p.Errors[0].Message == "") {
		t.Errorf("%s: field errors %+v, want one naming %s", c.name, p.Errors, c.field)
	}
}

// newKeyedHandler serves router.NewHandler over loopback on an engine of
// three sessions that answer VALID, with one API key, "k", and returns
// the server and the sessions' recorder.
func newKeyedHandler(t *testing.T) (*httptest.Server, *routertest.Recorder) {
	t.Helper()
	rec := routertest.NewRecorder(routertest.Verdict(router.VerdictValid))
	h, err := router.NewHandler(newEngine(t, routertest.Sessions(1, 3, rec, rec, rec)),
		router.WithAuthenticator(router.KeyAuthenticator(map[string]string{"k": "tests"})))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, rec
}

// nested returns n arrays nested in one another.
func nested(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }

// TestHandler_badInput sends hostile bodies and credentials to
// router.NewHandler over loopback. Each gets its documented status and
// problem body, none reaches a worker, and none leaves an idempotency
// entry behind.
func TestHandler_badInput(t *testing.T) {
	rec := routertest.NewRecorder(routertest.Verdict(router.VerdictValid))
	idem := &router.MemoryIdempotencyStore{}
	h, err := router.NewHandler(newEngine(t, routertest.Sessions(1, 3, rec, rec, rec)),
		router.WithAuthenticator(router.KeyAuthenticator(map[string]string{"k": "tests"})),
		router.WithIdempotency(idem, 0),
		router.WithMaxBodyBytes(4096))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	const v3, v2 = "/api/v3/validate", "/api/v2/validate"
	claim := `"claim":{"type":"summary","output":"x"}`
	valid3 := func(extra string) string { return `{` + claim + `,"consensus":{"replicas":3}` + extra + `}` }
	cases := []badInputCase{
		// Size.
		{name: "oversized body", path: v3, body: valid3(`,"context":{"pad":"` + strings.Repeat("x", 5000) + `"}`), status: 413, code: "body_too_large"},
		{name: "oversized chunked body", path: v3, body: valid3(`,"context":{"pad":"` + strings.Repeat("x", 5000) + `"}`), status: 413, code: "body_too_large", chunked: true},
		// Structure.
		{name: "nested past the limit", path: v3, body: valid3(`,"context":{"deep":` + nested(200) + `}`), status: 400, code: "malformed_json"},
		{name: "invalid UTF-8", path: v3, body: `{"claim":{"type":"summary","output":"` + "\xff\xfe" + `"},"consensus":{"replicas":3}}`, status: 400, code: "malformed_json"},
		{name: "truncated JSON", path: v3, body: `{"claim":{"type":`, status: 400, code: "malformed_json"},
		{name: "empty body", path: v3, body: ``, status: 400, code: "malformed_json"},
		{name: "two values", path: v3, body: valid3(``) + valid3(``), status: 400, code: "malformed_json"},
		{name: "duplicate member", path: v3, body: `{` + claim + `,"consensus":{"replicas":3,"replicas":1}}`, status: 400, code: "invalid_request", field: "consensus.replicas"},
		{name: "duplicate top-level member", path: v3, body: `{` + claim + `,` + claim + `,"consensus":{"replicas":3}}`, status: 400, code: "invalid_request", field: "claim"},
		// Numbers.
		{name: "replicas overflow", path: v3, body: `{` + claim + `,"consensus":{"replicas":99999999999999999999}}`, status: 400, code: "invalid_request", field: "consensus.replicas"},
		{name: "replicas 1e400", path: v3, body: `{` + claim + `,"consensus":{"replicas":1e400}}`, status: 400, code: "invalid_request", field: "consensus.replicas"},
		{name: "replicas fraction", path: v3, body: `{` + claim + `,"consensus":{"replicas":3.5}}`, status: 400, code: "invalid_request", field: "consensus.replicas"},
		{name: "replicas negative", path: v3, body: `{` + claim + `,"consensus":{"replicas":-3}}`, status: 400, code: "invalid_request", field: "consensus.replicas"},
		{name: "timeout overflow", path: v3, body: valid3(`,"policy":{"timeout_ms":9223372036854775808}`), status: 400, code: "invalid_request", field: "policy.timeout_ms"},
		{name: "timeout too long", path: v3, body: valid3(`,"policy":{"timeout_ms":3600001}`), status: 400, code: "invalid_request", field: "policy.timeout_ms"},
		{name: "session id overflow", path: v2, body: `{"session_id":1e30,` + claim + `}`, status: 400, code: "invalid_request", field: "session_id"},
		{name: "session id string overflow", path: v2, body: `{"session_id":"99999999999999999999",` + claim + `}`, status: 400, code: "invalid_request", field: "session_id"},
		{name: "session pool member overflow", path: v3, body: `{` + claim + `,"consensus":{"replicas":3,"session_pool":[1,18446744073709551616]}}`, status: 400, code: "invalid_request"},
		// Types.
		{name: "replicas as a string", path: v3, body: `{` + claim + `,"consensus":{"replicas":"3"}}`, status: 400, code: "invalid_request", field: "consensus.replicas"},
		{name: "claim as an array", path: v3, body: `{"claim":[],"consensus":{"replicas":3}}`, status: 400, code: "invalid_request", field: "claim"},
		{name: "rules as a string", path: v3, body: valid3(`,"policy":{"rules":"consistency"}`), status: 400, code: "invalid_request", field: "policy.rules"},
		{name: "body an array", path: v3, body: `[1,2,3]`, status: 400, code: "invalid_request"},
		{name: "body null", path: v3, body: `null`, status: 400, code: "invalid_request"},
		// Headers and credentials.
		{name: "no credentials", path: v3, body: valid3(``), header: map[string]string{"Authorization": ""}, status: 401, code: "unauthorized"},
		{name: "wrong key", path: v3, body: valid3(``), header: map[string]string{"Authorization": "Bearer nope"}, status: 401, code: "unauthorized"},
		{name: "wrong scheme", path: v3, body: valid3(``), header: map[string]string{"Authorization": "Basic azpr"}, status: 401, code: "unauthorized"},
		{name: "form body", path: v3, body: `replicas=3`, header: map[string]string{"Content-Type": "application/x-www-form-urlencoded"}, status: 415, code: "unsupported_media_type"},
		{name: "gzip content coding", path: v3, body: valid3(``), header: map[string]string{"Content-Encoding": "gzip"}, status: 415, code: "unsupported_media_type"},
		{name: "bad idempotency key", path: v3, body: valid3(``), header: map[string]string{"Idempotency-Key": strings.Repeat("k", 300)}, status: 400, code: "invalid_request"},
	}
	for _, c := range cases {
		sendBad(t, srv, c)
	}
	if n := rec.Calls.Load(); n != 0 {
		t.Errorf("bad input reached a worker %d times", n)
	}
	if n := idem.Len(); n != 0 {
		t.Errorf("bad input left %d idempotency entries", n)
	}
}

// TestHandler_badInputInAnyValue checks the members that take any JSON
// value (claim.output, context, metadata): a huge number, deep but
// allowed nesting or odd Unicode there is carried to the workers as
// given, never a 500. A lone UTF-16 surrogate, which is no character and
// which a decoder would replace with U+FFFD, is a 400 naming the member.
func TestHandler_badInputInAnyValue(t *testing.T) {
	srv, _ := newKeyedHandler(t)
	huge := "1" + strings.Repeat("0", 500)
	for _, body := range []string{
		`{"claim":{"type":"summary","output":` + huge + `},"consensus":{"replicas":3}}`,
		`{"claim":{"type":"summary","output":1e400},"consensus":{"replicas":3}}`,
		`{"claim":{"type":"summary","output":-0.0e-999},"consensus":{"replicas":3}}`,
		`{"claim":{"type":"summary","output":"x"},"context":{"n":` + huge + `,"deep":` + nested(100) + `},"consensus":{"replicas":3}}`,
		`{"claim":{"type":"summary","output":"a pair \ud83d\ude00, NUL \u0000, RTL \u202e"},"consensus":{"replicas":3}}`,
		`{"claim":{"type":"summary","output":"\ud800 lone surrogate"},"consensus":{"replicas":3}}`,
	} {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+"/api/v3/validate", strings.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer k")
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		want := http.StatusOK
		if strings.Contains(body, "lone") {
			want = http.StatusBadRequest
			if !strings.Contains(string(raw), `"field":"claim.output","rule":"unicode"`) {
				t.Errorf("%.80s...: %s, want rule unicode on claim.output", body, raw)
			}
		}
		if resp.StatusCode != want {
			t.Errorf("%.80s...: status %d (%s), want %d", body, resp.StatusCode, raw, want)
		}
	}
}
