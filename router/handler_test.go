package router_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/router"
)

const testKey = "test-key"

// newTestServer serves svc through a Handler that knows testKey as "alice"
// and "other-key" as "bob", with opts added.
func newTestServer(t *testing.T, svc router.Service, opts ...router.HandlerOption) *httptest.Server {
	t.Helper()
	opts = append([]router.HandlerOption{router.WithAuthenticator(router.KeyAuthenticator(map[string]string{testKey: "alice", "other-key": "bob"}))}, opts...)
	h, err := router.NewHandler(svc, opts...)
	if err != nil {
		t.Fatalf("NewHandler: %v", err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

type reply struct {
	status int
	header http.Header
	body   []byte
}

func (r reply) problem(t *testing.T) router.Error {
	t.Helper()
	var p router.Error
	if ct := r.header.Get("Content-Type"); ct != "application/problem+json" {
		t.Fatalf("Content-Type = %q, want application/problem+json (body %s)", ct, r.body)
	}
	if err := json.Unmarshal(r.body, &p); err != nil {
		t.Fatalf("problem body %s: %v", r.body, err)
	}
	return p
}

// send makes one request; headers are name, value pairs, and a
// Content-Type of JSON and the test key are set unless given. It reports
// a failed request with t.Error and returns the zero reply (status 0),
// never stopping the goroutine, so that it may run on any goroutine and
// its caller's check of the status fails.
func send(t *testing.T, method, url, body string, headers ...string) reply {
	t.Helper()
	req, err := http.NewRequest(method, url, strings.NewReader(body))
	if err != nil {
		t.Error(err)
		return reply{}
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+testKey)
	for i := 0; i+1 < len(headers); i += 2 {
		if headers[i+1] == "" {
			req.Header.Del(headers[i])
		} else {
			req.Header.Set(headers[i], headers[i+1])
		}
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Error(err)
		return reply{}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Error(err)
		return reply{}
	}
	return reply{resp.StatusCode, resp.Header, b}
}

func TestHandler_routes(t *testing.T) {
	svc := &fakeService{}
	paid := func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.Header.Get("X-PAYMENT") == "" {
				w.WriteHeader(http.StatusPaymentRequired)
				return
			}
			next.ServeHTTP(w, r)
		})
	}
	withX402 := newTestServer(t, svc, router.WithX402(paid), router.WithTrialLimit(router.TrialLimit{Rate: 1000, Burst: 100}))
	without := newTestServer(t, svc)

	routes := router.Routes()
	if len(routes) != 26 {
		t.Fatalf("Routes() has %d routes, want 26", len(routes))
	}
	for _, rt := range routes {
		t.Run(rt.Method+" "+rt.Path, func(t *testing.T) {
			body := validBodies[rt.Op]
			before := svc.calls.Load()
			var got reply
			switch {
			case rt.Public:
				got = send(t, rt.Method, withX402.URL+rt.Path, "", "Authorization", "", "Content-Type", "")
			case rt.Variant == router.VariantNormal:
				if r := send(t, rt.Method, withX402.URL+rt.Path, body, "Authorization", ""); r.status != http.StatusUnauthorized {
					t.Errorf("call without credentials: status %d, want 401", r.status)
				}
				got = send(t, rt.Method, withX402.URL+rt.Path, body)
			case rt.Variant == router.VariantTrial:
				got = send(t, rt.Method, withX402.URL+rt.Path, body, "Authorization", "")
			case rt.Variant == router.VariantX402:
				if r := send(t, rt.Method, withX402.URL+rt.Path, body, "Authorization", ""); r.status != http.StatusPaymentRequired {
					t.Errorf("unpaid x402 call: status %d, want 402", r.status)
				}
				if r := send(t, rt.Method, without.URL+rt.Path, body); r.status != http.StatusNotImplemented || r.problem(t).Code != router.CodeX402NotConfigured {
					t.Errorf("x402 without middleware: status %d body %s, want 501 x402_not_configured", r.status, r.body)
				}
				got = send(t, rt.Method, withX402.URL+rt.Path, body, "Authorization", "", "X-PAYMENT", "proof")
			}
			if got.status != http.StatusOK {
				t.Fatalf("status %d, body %s; want 200", got.status, got.body)
			}
			if ct := got.header.Get("Content-Type"); ct != "application/json" {
				t.Errorf("Content-Type = %q, want application/json", ct)
			}
			if rt.Method == http.MethodGet {
				if n := svc.calls.Load() - before; n != 0 {
					t.Errorf("service called %d times by a route the Handler answers, want 0", n)
				}
				return
			}
			if n := svc.calls.Load() - before; n != 1 {
				t.Errorf("service called %d times, want 1", n)
			}
			svc.mu.Lock()
			last := svc.lastReq
			svc.mu.Unlock()
			if diff := cmp.Diff(requestFor(rt.Op), last, inputComparer); diff != "" {
				t.Errorf("request reaching the service (-want +got):\n%s", diff)
			}
		})
	}
}

// inputComparer compares router.Input values by kind and JSON.
var inputComparer = cmp.Comparer(func(a, b router.Input) bool {
	return a.Kind() == b.Kind() && string(a.Raw()) == string(b.Raw())
})

func TestHandler_rejects(t *testing.T) {
	svc := &fakeService{}
	h, err := router.NewHandler(svc, router.WithAuthenticator(router.KeyAuthenticator(map[string]string{testKey: "alice"})), router.WithMaxBodyBytes(256))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	tests := []struct {
		name       string
		method     string
		path       string
		body       string
		headers    []string
		wantStatus int
		wantCode   router.Code
		wantField  string
		wantHeader [2]string
	}{
		{"wrong method", "GET", "/api/v2/validate", "", nil, 405, "method_not_allowed", "", [2]string{"Allow", "POST"}},
		{"unknown path", "POST", "/api/v9/validate", validBodies[router.OpValidateV2], nil, 404, "not_found", "", [2]string{}},
		{"trailing slash", "POST", "/api/v2/validate/", validBodies[router.OpValidateV2], nil, 404, "not_found", "", [2]string{}},
		{"text body", "POST", "/api/v2/validate", validBodies[router.OpValidateV2], []string{"Content-Type", "text/plain"}, 415, "unsupported_media_type", "", [2]string{"Accept-Post", "application/json"}},
		{"no content type", "POST", "/api/v2/validate", validBodies[router.OpValidateV2], []string{"Content-Type", ""}, 415, "unsupported_media_type", "", [2]string{}},
		{"too large", "POST", "/api/v2/validate", `{"session_id":1,"claim":{"type":"summary","output":"` + strings.Repeat("x", 300) + `"}}`, nil, 413, "body_too_large", "", [2]string{}},
		{"malformed JSON", "POST", "/api/v2/validate", `{"session_id":`, nil, 400, "malformed_json", "", [2]string{}},
		{"wrong type", "POST", "/api/v2/delegate", `{"session_id":1,"objective":"x","execution":{"max_steps":"many"}}`, nil, 400, "invalid_request", "execution.max_steps", [2]string{}},
		{"bad replicas", "POST", "/api/v3/validate", `{"claim":{"type":"summary","output":"s"},"consensus":{"replicas":2}}`, nil, 400, "invalid_request", "consensus.replicas", [2]string{}},
		{"missing field", "POST", "/api/v1/validate", `{"session_id":1,"task_request_input":"q"}`, nil, 400, "invalid_request", "task_result_output", [2]string{}},
		{"no credentials", "POST", "/api/v2/validate", validBodies[router.OpValidateV2], []string{"Authorization", ""}, 401, "unauthorized", "", [2]string{"WWW-Authenticate", `Bearer realm="vouch"`}},
		{"wrong key", "POST", "/api/v2/validate", validBodies[router.OpValidateV2], []string{"Authorization", "Bearer nope"}, 401, "unauthorized", "", [2]string{"WWW-Authenticate", `Bearer realm="vouch", error="invalid_token"`}},
		{"not bearer", "POST", "/api/v2/validate", validBodies[router.OpValidateV2], []string{"Authorization", "Basic dGVzdA=="}, 401, "unauthorized", "", [2]string{}},
		{"bad idempotency key", "POST", "/api/v2/validate", validBodies[router.OpValidateV2], []string{"Idempotency-Key", "has space"}, 400, "invalid_request", "", [2]string{}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := send(t, tt.method, srv.URL+tt.path, tt.body, tt.headers...)
			if got.status != tt.wantStatus {
				t.Fatalf("status %d, want %d (body %s)", got.status, tt.wantStatus, got.body)
			}
			p := got.problem(t)
			if p.Code != tt.wantCode || p.Status != tt.wantStatus {
				t.Errorf("problem code %q status %d, want %q %d", p.Code, p.Status, tt.wantCode, tt.wantStatus)
			}
			if p.RequestID == "" || p.RequestID != got.header.Get("X-Request-Id") {
				t.Errorf("problem request_id %q, header %q: want equal and set", p.RequestID, got.header.Get("X-Request-Id"))
			}
			if tt.wantField != "" && (len(p.Errors) == 0 || p.Errors[0].Field != tt.wantField) {
				t.Errorf("field errors %+v, want first field %q", p.Errors, tt.wantField)
			}
			if tt.wantHeader[0] != "" && got.header.Get(tt.wantHeader[0]) != tt.wantHeader[1] {
				t.Errorf("%s = %q, want %q", tt.wantHeader[0], got.header.Get(tt.wantHeader[0]), tt.wantHeader[1])
			}
		})
	}
	if n := svc.calls.Load(); n != 0 {
		t.Errorf("service called %d times by rejected requests, want 0", n)
	}
}

func TestHandler_serviceErrors(t *testing.T) {
	svc := &fakeService{}
	srv := newTestServer(t, svc)
	tests := []struct {
		name       string
		hook       func(ctx context.Context) (any, error)
		wantStatus int
		wantCode   router.Code
	}{
		{"problem", func(context.Context) (any, error) {
			return nil, &router.Error{Status: 409, Code: "disagreement", Title: "Conflict", Detail: "replicas disagree"}
		}, 409, "disagreement"},
		{"plain error", func(context.Context) (any, error) {
			return nil, errors.New("database password is hunter2")
		}, 500, "internal"},
		{"deadline", func(context.Context) (any, error) {
			return nil, fmt.Errorf("waiting: %w", context.DeadlineExceeded)
		}, 504, "timeout"},
		{"problem with a bad status", func(context.Context) (any, error) { return nil, &router.Error{Status: 200} }, 500, "internal"},
		{"nil response", func(context.Context) (any, error) { return nil, nil }, 500, "internal"},
		{"panic", func(context.Context) (any, error) { panic("boom: hunter2") }, 500, "internal"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			svc.hook = func(ctx context.Context, _ router.Operation, _ any) (any, error) { return tt.hook(ctx) }
			got := send(t, "POST", srv.URL+"/api/v2/validate", validBodies[router.OpValidateV2])
			if got.status != tt.wantStatus {
				t.Fatalf("status %d, want %d (%s)", got.status, tt.wantStatus, got.body)
			}
			if p := got.problem(t); p.Code != tt.wantCode {
				t.Errorf("code %q, want %q", p.Code, tt.wantCode)
			}
			if strings.Contains(string(got.body), "hunter2") {
				t.Errorf("body %s reveals the error's internals", got.body)
			}
		})
	}
	svc.hook = nil
	if got := send(t, "POST", srv.URL+"/api/v2/validate", validBodies[router.OpValidateV2]); got.status != 200 {
		t.Errorf("after a panic the server answers %d, want 200", got.status)
	}
}

func TestHandler_trace(t *testing.T) {
	svc := &fakeService{}
	srv := newTestServer(t, svc)
	const trace = "4bf92f3577b34da6a3ce929d0e0e4736"
	got := send(t, "POST", srv.URL+"/api/v1/delegate", validBodies[router.OpDelegateV1], "traceparent", "00-"+trace+"-00f067aa0ba902b7-01")
	tp := got.header.Get("traceparent")
	parts := strings.Split(tp, "-")
	if len(parts) != 4 || parts[1] != trace || parts[2] == "00f067aa0ba902b7" || len(parts[2]) != 16 || parts[3] != "01" {
		t.Errorf("traceparent = %q, want the trace id %s with a new span id and flags 01", tp, trace)
	}
	if svc.lastTrace != trace {
		t.Errorf("TraceIDFrom in the service = %q, want %q", svc.lastTrace, trace)
	}
	first := got.header.Get("X-Request-Id")
	got = send(t, "POST", srv.URL+"/api/v1/delegate", validBodies[router.OpDelegateV1], "traceparent", "00-"+strings.Repeat("0", 32)+"-00f067aa0ba902b7-01")
	if tp := got.header.Get("traceparent"); tp != "" {
		t.Errorf("an invalid traceparent was answered with %q, want none", tp)
	}
	if svc.lastTrace != "" {
		t.Errorf("TraceIDFrom = %q for an invalid traceparent, want empty", svc.lastTrace)
	}
	if second := got.header.Get("X-Request-Id"); second == "" || second == first {
		t.Errorf("request ids %q then %q, want two distinct ids", first, second)
	}
}

// fakeClock is a settable clock for the Handler.
type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *fakeClock) add(d time.Duration) {
	c.mu.Lock()
	c.t = c.t.Add(d)
	c.mu.Unlock()
}

func TestHandler_trialLimit(t *testing.T) {
	clk := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	srv := newTestServer(t, &fakeService{}, router.WithHandlerClock(clk.now), router.WithTrialLimit(router.TrialLimit{Rate: 0.5, Burst: 2}))
	path := srv.URL + "/api/v1/trial/delegate"
	body := validBodies[router.OpDelegateV1]
	for i := range 2 {
		if got := send(t, "POST", path, body, "Authorization", ""); got.status != 200 {
			t.Fatalf("call %d: status %d, want 200", i+1, got.status)
		}
	}
	got := send(t, "POST", path, body, "Authorization", "")
	if got.status != http.StatusTooManyRequests || got.problem(t).Code != "rate_limited" {
		t.Fatalf("third call: status %d body %s, want 429 rate_limited", got.status, got.body)
	}
	if ra := got.header.Get("Retry-After"); ra != "2" {
		t.Errorf("Retry-After = %q, want 2 (one token at 0.5/s)", ra)
	}
	// Another caller (a known key) has a bucket of its own.
	if got := send(t, "POST", path, body); got.status != 200 {
		t.Errorf("caller with a key: status %d, want 200", got.status)
	}
	clk.add(2 * time.Second)
	if got := send(t, "POST", path, body, "Authorization", ""); got.status != 200 {
		t.Errorf("after the refill: status %d, want 200", got.status)
	}
	// The normal route is not limited.
	for range 5 {
		if got := send(t, "POST", srv.URL+"/api/v1/delegate", body); got.status != 200 {
			t.Fatalf("normal route: status %d, want 200", got.status)
		}
	}
}

func TestHandler_idempotency(t *testing.T) {
	clk := &fakeClock{t: time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)}
	svc := &fakeService{}
	var n int
	svc.hook = func(_ context.Context, _ router.Operation, req any) (any, error) {
		n++ // one caller at a time in this test
		return &router.ValidateV2Response{RequestID: fmt.Sprint("run-", n), Verdict: router.VerdictValid}, nil
	}
	srv := newTestServer(t, svc, router.WithHandlerClock(clk.now), router.WithIdempotency(nil, time.Hour))
	path := srv.URL + "/api/v2/validate"
	body := validBodies[router.OpValidateV2]

	first := send(t, "POST", path, body, "Idempotency-Key", "k1")
	again := send(t, "POST", path, body, "Idempotency-Key", "k1")
	if first.status != 200 || again.status != 200 || string(first.body) != string(again.body) {
		t.Fatalf("repeat: %d %s then %d %s, want the same 200 body", first.status, first.body, again.status, again.body)
	}
	if again.header.Get("Idempotent-Replayed") != "true" || first.header.Get("Idempotent-Replayed") != "" {
		t.Errorf("Idempotent-Replayed: first %q, repeat %q; want empty then true", first.header.Get("Idempotent-Replayed"), again.header.Get("Idempotent-Replayed"))
	}
	if c := svc.calls.Load(); c != 1 {
		t.Errorf("service ran %d times, want 1", c)
	}
	other := send(t, "POST", path, strings.Replace(body, `"s"`, `"t"`, 1), "Idempotency-Key", "k1")
	if other.status != http.StatusUnprocessableEntity || other.problem(t).Code != "unprocessable" {
		t.Errorf("same key, other body: status %d %s, want 422", other.status, other.body)
	}
	if got := send(t, "POST", srv.URL+"/api/v2/trial/validate", body, "Idempotency-Key", "k1"); got.status != 422 {
		t.Errorf("same key and caller, other path: status %d, want 422", got.status)
	}
	bob := send(t, "POST", path, body, "Idempotency-Key", "k1", "Authorization", "Bearer other-key")
	if bob.status != 200 || string(bob.body) == string(first.body) {
		t.Errorf("another caller's key k1: %d %s, want a fresh run", bob.status, bob.body)
	}
	clk.add(time.Hour)
	later := send(t, "POST", path, body, "Idempotency-Key", "k1")
	if later.status != 200 || string(later.body) == string(first.body) {
		t.Errorf("after the window: %s, want a fresh run", later.body)
	}
	if c := svc.calls.Load(); c != 3 {
		t.Errorf("service ran %d times, want 3", c)
	}
}

func TestHandler_idempotencyServerErrorsNotKept(t *testing.T) {
	svc := &fakeService{}
	fail := true
	svc.hook = func(context.Context, router.Operation, any) (any, error) {
		if fail {
			fail = false
			return nil, &router.Error{Status: 503, Code: "unavailable", Title: "Service Unavailable"}
		}
		return &router.ValidateV2Response{Verdict: router.VerdictValid}, nil
	}
	srv := newTestServer(t, svc)
	path := srv.URL + "/api/v2/validate"
	if got := send(t, "POST", path, validBodies[router.OpValidateV2], "Idempotency-Key", "k"); got.status != 503 {
		t.Fatalf("first: %d, want 503", got.status)
	}
	if got := send(t, "POST", path, validBodies[router.OpValidateV2], "Idempotency-Key", "k"); got.status != 200 {
		t.Fatalf("retry: %d, want 200 from a second run", got.status)
	}
	if c := svc.calls.Load(); c != 2 {
		t.Errorf("service ran %d times, want 2", c)
	}
}

func TestHandler_idempotencyConcurrent(t *testing.T) {
	svc := &fakeService{}
	entered := make(chan struct{})
	release := make(chan struct{})
	svc.hook = func(context.Context, router.Operation, any) (any, error) {
		close(entered) // a second run would panic here: closing a closed channel
		<-release
		return &router.ValidateV2Response{Verdict: router.VerdictValid, Reasons: []string{"once"}}, nil
	}
	store := &router.MemoryIdempotencyStore{}
	srv := newTestServer(t, svc, router.WithIdempotency(store, 0))
	path := srv.URL + "/api/v2/validate"
	replies := make([]reply, 2)
	var wg sync.WaitGroup
	wg.Go(func() {
		replies[0] = send(t, "POST", path, validBodies[router.OpValidateV2], "Idempotency-Key", "same")
	})
	<-entered
	wg.Go(func() {
		replies[1] = send(t, "POST", path, validBodies[router.OpValidateV2], "Idempotency-Key", "same")
	})
	// The second request is waiting once the store holds exactly the
	// in-flight reservation; release the first only then.
	for store.Len() != 1 {
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	if replies[0].status != 200 || string(replies[0].body) != string(replies[1].body) {
		t.Errorf("concurrent duplicates: %d %s and %d %s, want one 200 body twice", replies[0].status, replies[0].body, replies[1].status, replies[1].body)
	}
	if c := svc.calls.Load(); c != 1 {
		t.Errorf("service ran %d times, want 1", c)
	}
}

func TestNewHandler_errors(t *testing.T) {
	tests := []struct {
		name string
		svc  router.Service
		opts []router.HandlerOption
	}{
		{"nil service", nil, nil},
		{"negative body limit", &fakeService{}, []router.HandlerOption{router.WithMaxBodyBytes(-1)}},
		{"negative window", &fakeService{}, []router.HandlerOption{router.WithIdempotency(nil, -time.Second)}},
		{"negative burst", &fakeService{}, []router.HandlerOption{router.WithTrialLimit(router.TrialLimit{Burst: -1})}},
	}
	for _, tt := range tests {
		if h, err := router.NewHandler(tt.svc, tt.opts...); err == nil || h != nil {
			t.Errorf("%s: NewHandler = %v, %v; want an error", tt.name, h, err)
		}
	}
}

func TestHandler_authenticatorProblem(t *testing.T) {
	auth := func(*http.Request) (string, error) {
		return "", &router.Error{Status: 503, Code: "unavailable", Title: "Service Unavailable", Detail: "key store down"}
	}
	srv := newTestServer(t, &fakeService{}, router.WithAuthenticator(auth))
	got := send(t, "POST", srv.URL+"/api/v1/delegate", validBodies[router.OpDelegateV1])
	if got.status != 503 || got.problem(t).Detail != "key store down" {
		t.Errorf("status %d body %s, want the authenticator's 503", got.status, got.body)
	}
}
