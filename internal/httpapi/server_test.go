package httpapi_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/internal/httpapi"
	"github.com/vouchkit/vouch/internal/traceparent"
	"github.com/vouchkit/vouch/problem"
)

const testKey = "test-key"

var auth = httpapi.KeyAuthenticator(map[string]string{testKey: "alice"})

// echo answers the JSON body it was given, with the trace id and caller
// name it saw.
func echo(_ *http.Request, body []byte) (httpapi.Run, error) {
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		return nil, problem.New(http.StatusBadRequest, problem.CodeMalformedJSON, err.Error())
	}
	return func(ctx context.Context) (any, error) {
		return map[string]any{"got": v, "trace": traceparent.From(ctx), "principal": httpapi.Principal(ctx), "caller": httpapi.Caller(ctx)}, nil
	}, nil
}

func newServer(t *testing.T, cfg httpapi.Config) *httptest.Server {
	t.Helper()
	if cfg.Authenticator == nil {
		cfg.Authenticator = auth
	}
	s, err := httpapi.NewServer(cfg)
	if err != nil {
		t.Fatalf("NewServer: %v", err)
	}
	srv := httptest.NewServer(s)
	t.Cleanup(srv.Close)
	return srv
}

type reply struct {
	status int
	header http.Header
	body   string
}

// send makes one request; headers are name, value pairs.
func send(t *testing.T, method, url, body string, headers ...string) reply {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if body != "" {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Add(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return reply{resp.StatusCode, resp.Header, string(b)}
}

func (r reply) problem(t *testing.T) problem.Details {
	t.Helper()
	var p problem.Details
	if err := json.Unmarshal([]byte(r.body), &p); err != nil || r.header.Get("Content-Type") != problem.ContentType {
		t.Fatalf("%d %s (%s): not a problem body", r.status, r.body, r.header.Get("Content-Type"))
	}
	return p
}

func TestServer_traceparent(t *testing.T) {
	srv := newServer(t, httpapi.Config{Endpoints: []httpapi.Endpoint{{Method: "POST", Path: "/echo", Access: httpapi.Public, Prepare: echo}}})
	const id = "4bf92f3577b34da6a3ce929d0e0e4736"
	tests := []struct {
		in        string
		wantID    string // "" : ignored
		wantFlags string
	}{
		{"00-" + id + "-00f067aa0ba902b7-01", id, "01"},
		{" 00-" + id + "-00f067aa0ba902b7-00 ", id, "00"},
		{"01-" + id + "-00f067aa0ba902b7-01-extra", id, "01"},
		{"00-" + id + "-00f067aa0ba902b7-03", id, "03"},
		{"00-" + id + "-00f067aa0ba902b7-ff", id, "03"}, // reserved bits are not passed on
		{"02-" + id + "-00f067aa0ba902b7-fd-extra", id, "01"},
		{"00-" + id + "-00f067aa0ba902b7-01-extra", "", ""}, // version 00 has no extra fields
		{"ff-" + id + "-00f067aa0ba902b7-01", "", ""},
		{"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01", "", ""},
		{"00-00000000000000000000000000000000-00f067aa0ba902b7-01", "", ""},
		{"00-" + id + "-0000000000000000-01", "", ""},
		{"00-" + id + "-00f067aa0ba902b7", "", ""},
		{"00_" + id + "_00f067aa0ba902b7_01", "", ""},
	}
	for _, tt := range tests {
		got := send(t, "POST", srv.URL+"/echo", `{}`, "traceparent", tt.in)
		var body struct{ Trace string }
		json.Unmarshal([]byte(got.body), &body)
		if body.Trace != tt.wantID {
			t.Errorf("traceparent %q: trace id in the context %q, want %q", tt.in, body.Trace, tt.wantID)
		}
		tp := got.header.Get("traceparent")
		if tt.wantID == "" {
			if tp != "" {
				t.Errorf("traceparent %q answered with %q, want none", tt.in, tp)
			}
			continue
		}
		parts := strings.Split(tp, "-")
		if len(parts) != 4 || parts[0] != "00" || parts[1] != tt.wantID || parts[2] == "00f067aa0ba902b7" || parts[3] != tt.wantFlags {
			t.Errorf("traceparent %q answered with %q, want 00-%s-<new span>-%s", tt.in, tp, tt.wantID, tt.wantFlags)
		}
	}
	// Two traceparent headers, even alike, name no parent: the request
	// starts a new trace, as the W3C specification has it.
	valid := "00-" + id + "-00f067aa0ba902b7-01"
	got := send(t, "POST", srv.URL+"/echo", `{}`, "traceparent", valid, "traceparent", valid)
	var body struct{ Trace string }
	json.Unmarshal([]byte(got.body), &body)
	if body.Trace != "" || got.header.Get("traceparent") != "" {
		t.Errorf("two traceparent headers: trace id in the context %q, answered with %q; want neither", body.Trace, got.header.Get("traceparent"))
	}
}

// FuzzServerTraceparent sends arbitrary traceparent headers: the Server
// echoes one exactly when the value parses, with its trace id, and the
// endpoint sees that trace id.
func FuzzServerTraceparent(f *testing.F) {
	f.Add("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01")
	f.Add("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-ever")
	f.Add("00-00000000000000000000000000000000-00f067aa0ba902b7-01")
	s, err := httpapi.NewServer(httpapi.Config{Endpoints: []httpapi.Endpoint{{Method: "POST", Path: "/echo", Access: httpapi.Public, Prepare: echo}}})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, v string) {
		if strings.ContainsAny(v, "\r\n\x00") {
			return
		}
		r := httptest.NewRequest("POST", "/echo", strings.NewReader(`{}`))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("traceparent", v)
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		var body struct{ Trace string }
		if err := json.Unmarshal(w.Body.Bytes(), &body); err != nil || w.Code != 200 {
			t.Fatalf("status %d body %q", w.Code, w.Body)
		}
		id, _, ok := traceparent.Parse(v)
		tp := w.Header().Get("traceparent")
		switch {
		case !ok && (tp != "" || body.Trace != ""):
			t.Fatalf("invalid %q answered with %q, context trace %q", v, tp, body.Trace)
		case ok && body.Trace != id:
			t.Fatalf("%q: context trace %q, want %q", v, body.Trace, id)
		case ok:
			if id2, _, ok2 := traceparent.Parse(tp); !ok2 || id2 != id {
				t.Fatalf("%q answered with %q, which does not carry %s", v, tp, id)
			}
		}
	})
}

// recordingLimiter records the callers it is asked about.
type recordingLimiter struct {
	mu      sync.Mutex
	callers []string
	answer  func(n int) (bool, time.Duration, error)
}

func (l *recordingLimiter) Allow(_ context.Context, caller string, _ time.Time) (bool, time.Duration, error) {
	l.mu.Lock()
	l.callers = append(l.callers, caller)
	n := len(l.callers)
	l.mu.Unlock()
	return l.answer(n)
}

func TestServer_rateLimiter(t *testing.T) {
	errDown := errors.New("database is down: password hunter2")
	lim := &recordingLimiter{answer: func(n int) (bool, time.Duration, error) {
		switch n {
		case 1:
			return true, 0, nil
		case 2:
			return false, 1500 * time.Millisecond, nil
		case 3:
			return false, 0, errDown
		default:
			return false, 0, problem.New(http.StatusForbidden, problem.CodeForbidden, "banned")
		}
	}}
	srv := newServer(t, httpapi.Config{RateLimiter: lim, Endpoints: []httpapi.Endpoint{{Method: "POST", Path: "/try", Access: httpapi.Trial, Prepare: echo}}})
	url := srv.URL + "/try"

	if got := send(t, "POST", url, `{}`); got.status != 200 {
		t.Fatalf("allowed call: %d %s", got.status, got.body)
	}
	got := send(t, "POST", url, `{}`, "Authorization", "Bearer "+testKey)
	if got.status != 429 || got.header.Get("Retry-After") != "2" || got.problem(t).Code != problem.CodeRateLimited {
		t.Errorf("refused call: %d Retry-After %q %s, want 429 with Retry-After 2", got.status, got.header.Get("Retry-After"), got.body)
	}
	got = send(t, "POST", url, `{}`)
	if got.status != 503 || got.problem(t).Code != problem.CodeUnavailable || strings.Contains(got.body, "hunter2") {
		t.Errorf("limiter failure: %d %s, want a 503 that reveals nothing", got.status, got.body)
	}
	if got = send(t, "POST", url, `{}`); got.status != 403 || got.problem(t).Detail != "banned" {
		t.Errorf("limiter problem: %d %s, want its own 403", got.status, got.body)
	}
	want := []string{"ip:127.0.0.1", "key:alice", "ip:127.0.0.1", "ip:127.0.0.1"}
	if diff := cmp.Diff(want, lim.callers); diff != "" {
		t.Errorf("callers asked about (-want +got):\n%s", diff)
	}
}

func TestServer_callerAndPrincipal(t *testing.T) {
	pass := func(next http.Handler) http.Handler { return next }
	srv := newServer(t, httpapi.Config{X402: pass, Endpoints: []httpapi.Endpoint{
		{Method: "POST", Path: "/key", Access: httpapi.Key, Prepare: echo},
		{Method: "POST", Path: "/trial", Access: httpapi.Trial, Prepare: echo},
		{Method: "POST", Path: "/paid", Access: httpapi.Paid, Prepare: echo},
		{Method: "POST", Path: "/public", Access: httpapi.Public, Prepare: echo},
	}})
	type who struct{ Caller, Principal string }
	tests := []struct {
		path, auth string
		want       who
	}{
		{"/key", "Bearer " + testKey, who{"key:alice", "alice"}},
		{"/trial", "Bearer " + testKey, who{"key:alice", "alice"}},
		{"/trial", "", who{"ip:127.0.0.1", ""}},
		{"/trial", "Bearer wrong", who{"ip:127.0.0.1", ""}},
		{"/paid", "Bearer " + testKey, who{"key:alice", "alice"}}, // the paywall names no payer
		{"/public", "Bearer " + testKey, who{"ip:127.0.0.1", "alice"}},
	}
	for _, tt := range tests {
		var headers []string
		if tt.auth != "" {
			headers = []string{"Authorization", tt.auth}
		}
		got := send(t, "POST", srv.URL+tt.path, `{}`, headers...)
		var w who
		if err := json.Unmarshal([]byte(got.body), &w); err != nil || got.status != 200 {
			t.Fatalf("%s %q: %d %s", tt.path, tt.auth, got.status, got.body)
		}
		if w != tt.want {
			t.Errorf("%s with %q: %+v, want %+v", tt.path, tt.auth, w, tt.want)
		}
	}
}

func TestServer_mountedHandler(t *testing.T) {
	var mu sync.Mutex
	var seen []string
	mounted := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		seen = append(seen, httpapi.Principal(r.Context())+" "+r.PathValue("id"))
		mu.Unlock()
		panic("mounted handler failed")
	})
	srv := newServer(t, httpapi.Config{Endpoints: []httpapi.Endpoint{{Method: "GET", Path: "/things/{id}", Access: httpapi.Key, Handler: mounted}}})

	if got := send(t, "GET", srv.URL+"/things/7", ""); got.status != 401 || got.header.Get("WWW-Authenticate") == "" {
		t.Errorf("no credentials: %d, want 401 with a challenge", got.status)
	}
	got := send(t, "GET", srv.URL+"/things/7", "", "Authorization", "Bearer "+testKey)
	if p := got.problem(t); got.status != 500 || p.RequestID == "" || p.RequestID != got.header.Get("X-Request-Id") {
		t.Errorf("panicking handler: %d %s, want a 500 problem with the request id", got.status, got.body)
	}
	mu.Lock()
	defer mu.Unlock()
	if diff := cmp.Diff([]string{"alice 7"}, seen); diff != "" {
		t.Errorf("principal and path value seen by the handler (-want +got):\n%s", diff)
	}
	got = send(t, "DELETE", srv.URL+"/things/7", "")
	if got.status != 405 || got.header.Get("Allow") != "GET, HEAD" || got.problem(t).Code != problem.CodeMethodNotAllowed {
		t.Errorf("DELETE: %d Allow %q, want 405 with Allow GET, HEAD", got.status, got.header.Get("Allow"))
	}
	if got = send(t, "GET", srv.URL+"/things/", ""); got.status != 404 {
		t.Errorf("GET /things/: %d, want 404", got.status)
	}
}

func TestServer_getWithPrepare(t *testing.T) {
	var runs atomic.Int64
	get := func(r *http.Request, body []byte) (httpapi.Run, error) {
		if body != nil {
			t.Errorf("GET endpoint given body %q", body)
		}
		id := r.PathValue("id")
		return func(context.Context) (any, error) { runs.Add(1); return map[string]string{"id": id}, nil }, nil
	}
	srv := newServer(t, httpapi.Config{Endpoints: []httpapi.Endpoint{{Method: "GET", Path: "/things/{id}", Access: httpapi.Public, Prepare: get}}})
	// No Content-Type is needed, and an Idempotency-Key does not replay a GET.
	for range 2 {
		got := send(t, "GET", srv.URL+"/things/x1", "", "Idempotency-Key", "k")
		if got.status != 200 || got.body != `{"id":"x1"}`+"\n" || got.header.Get("Idempotent-Replayed") != "" {
			t.Fatalf("GET: %d %q replayed %q, want 200 {\"id\":\"x1\"} run afresh", got.status, got.body, got.header.Get("Idempotent-Replayed"))
		}
	}
	if n := runs.Load(); n != 2 {
		t.Errorf("runs %d, want 2", n)
	}
}

func TestNewServer_errors(t *testing.T) {
	lim := httpapi.RateLimiterFunc(func(context.Context, string, time.Time) (bool, time.Duration, error) { return true, 0, nil })
	tests := []struct {
		name string
		cfg  httpapi.Config
	}{
		{"limiter and trial limit", httpapi.Config{RateLimiter: lim, TrialLimit: httpapi.TrialLimit{Burst: 3}}},
		{"negative body limit", httpapi.Config{MaxBodyBytes: -1}},
		{"negative rate", httpapi.Config{TrialLimit: httpapi.TrialLimit{Rate: -1}}},
		{"no path", httpapi.Config{Endpoints: []httpapi.Endpoint{{Method: "POST", Access: httpapi.Public, Prepare: echo}}}},
		{"no work", httpapi.Config{Endpoints: []httpapi.Endpoint{{Method: "POST", Path: "/a", Access: httpapi.Public}}}},
		{"both", httpapi.Config{Endpoints: []httpapi.Endpoint{{Method: "POST", Path: "/a", Access: httpapi.Public, Prepare: echo, Handler: http.NotFoundHandler()}}}},
		{"no access", httpapi.Config{Endpoints: []httpapi.Endpoint{{Method: "POST", Path: "/a", Prepare: echo}}}},
	}
	for _, tt := range tests {
		if s, err := httpapi.NewServer(tt.cfg); err == nil || s != nil {
			t.Errorf("%s: NewServer = %v, %v; want an error", tt.name, s, err)
		}
	}
}

// TestServer_authMessages: each way a credential can be wrong gets a 401
// whose detail says what to send.
func TestServer_authMessages(t *testing.T) {
	ok := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {})
	srv := newServer(t, httpapi.Config{Endpoints: []httpapi.Endpoint{{Method: "GET", Path: "/things", Access: httpapi.Key, Handler: ok}}})
	for _, tt := range []struct {
		name, auth, detail, challenge string
	}{
		{"none", "", "missing credentials: send Authorization: Bearer <key>", `Bearer realm="vouch"`},
		{"a bare key", testKey, `the Authorization header is not "Bearer <key>": put "Bearer " before the key`, `Bearer realm="vouch", error="invalid_request"`},
		{"another scheme", "Basic " + testKey, `the Authorization header is not "Bearer <key>": put "Bearer " before the key`, `Bearer realm="vouch", error="invalid_request"`},
		{"a wrong key", "Bearer not-the-key", "the credential is not valid", `Bearer realm="vouch", error="invalid_token"`},
	} {
		var got reply
		if tt.auth == "" {
			got = send(t, "GET", srv.URL+"/things", "")
		} else {
			got = send(t, "GET", srv.URL+"/things", "", "Authorization", tt.auth)
		}
		if p := got.problem(t); got.status != 401 || p.Detail != tt.detail || got.header.Get("WWW-Authenticate") != tt.challenge {
			t.Errorf("%s: %d %q, challenge %q; want 401 %q, challenge %q", tt.name, got.status, p.Detail, got.header.Get("WWW-Authenticate"), tt.detail, tt.challenge)
		}
	}
}
