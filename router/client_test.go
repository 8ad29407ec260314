package router_test

import (
	"context"
	"encoding/json"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/router"
)

// fastRetry retries quickly, so tests do not wait.
var fastRetry = router.RetryPolicy{Max: 3, WaitMin: time.Millisecond, WaitMax: 2 * time.Millisecond, RetryAfterMax: time.Second}

func newTestClient(t *testing.T, url string, opts ...router.ClientOption) *router.Client {
	t.Helper()
	opts = append([]router.ClientOption{router.WithAPIKey(testKey), router.WithRetry(fastRetry)}, opts...)
	c, err := router.NewClient(url, opts...)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	return c
}

// callOp calls op on svc with the valid request of op.
func callOp(ctx context.Context, svc router.Service, op router.Operation) (any, error) {
	switch req := requestFor(op).(type) {
	case *router.DelegateV1Request:
		return svc.DelegateV1(ctx, req)
	case *router.ValidateV1Request:
		return svc.ValidateV1(ctx, req)
	case *router.DelegateV2Request:
		return svc.DelegateV2(ctx, req)
	case *router.ValidateV2Request:
		return svc.ValidateV2(ctx, req)
	case *router.DelegateV3Request:
		return svc.DelegateV3(ctx, req)
	case *router.ValidateV3Request:
		return svc.ValidateV3(ctx, req)
	case *router.FactcheckRequest:
		return svc.Factcheck(ctx, req)
	case *router.FactcheckV1Request:
		return svc.FactcheckV1(ctx, req)
	case *router.FeedbackRequest:
		return nil, svc.(router.FeedbackReporter).Feedback(ctx, req.TraceID, *req.Right)
	}
	panic("unknown operation " + op)
}

// TestClient_roundTrip calls every POST operation the router lists for
// the normal and the trial variant both directly and through the Client,
// and requires the same answers.
func TestClient_roundTrip(t *testing.T) {
	svc := &fakeService{}
	srv := newTestServer(t, svc, router.WithTrialLimit(router.TrialLimit{Rate: 1000, Burst: 100}))
	c := newTestClient(t, srv.URL)
	for _, variant := range []router.Variant{router.VariantNormal, router.VariantTrial} {
		// The operations of variant that take a request body; the GET
		// meta routes (ping, about, status) have none to round-trip.
		var listed, compared []router.Operation
		for _, rt := range router.Routes() {
			if rt.Variant == variant && !rt.Alias && rt.Method == http.MethodPost {
				listed = append(listed, rt.Op)
			}
		}
		for op := range validBodies {
			if _, ok := router.RoutePath(op, variant); !ok {
				continue
			}
			compared = append(compared, op)
			ctx := router.WithVariant(context.Background(), variant)
			want, werr := callOp(ctx, svc, op)
			got, gerr := callOp(ctx, c, op)
			if werr != nil || gerr != nil {
				t.Fatalf("%s %s: errors %v (direct), %v (client)", op, variant, werr, gerr)
			}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("%s %s: direct and over HTTP differ (-direct +client):\n%s", op, variant, diff)
			}
		}
		slices.Sort(listed)
		slices.Sort(compared)
		if len(compared) != len(listed) || !slices.Equal(compared, listed) {
			t.Errorf("variant %q: compared %d operations %v, want the %d the router lists: %v",
				variant, len(compared), compared, len(listed), listed)
		}
	}
}

func TestClient_problem(t *testing.T) {
	srv := newTestServer(t, &fakeService{})
	c := newTestClient(t, srv.URL)
	_, err := c.ValidateV3(context.Background(), &router.ValidateV3Request{Consensus: router.ConsensusRequest{Replicas: 2}})
	var p *router.Error
	if !errors.As(err, &p) {
		t.Fatalf("error %v (%T), want a *router.Error", err, err)
	}
	if p.Status != 400 || p.Code != "invalid_request" || p.RequestID == "" {
		t.Errorf("problem %+v, want 400 invalid_request with a request id", p)
	}
	var fields []string
	for _, f := range p.Errors {
		fields = append(fields, f.Field)
	}
	for _, want := range []string{"claim.type", "claim.output", "consensus.replicas"} {
		if !strings.Contains(strings.Join(fields, " "), want) {
			t.Errorf("field errors %v lack %q", fields, want)
		}
	}

	bad := newTestClient(t, srv.URL, router.WithAPIKey("wrong"))
	_, err = bad.DelegateV1(context.Background(), requestFor(router.OpDelegateV1).(*router.DelegateV1Request))
	if !errors.As(err, &p) || p.Status != 401 {
		t.Errorf("wrong key: %v, want a 401 *router.Error", err)
	}
}

// counting is a test server that answers from a script of statuses and
// records each attempt's Idempotency-Key.
type counting struct {
	mu      sync.Mutex
	keys    []string
	script  []func(w http.ResponseWriter)
	svc     http.Handler
	attempt atomic.Int64
}

func (c *counting) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	n := int(c.attempt.Add(1)) - 1
	c.mu.Lock()
	c.keys = append(c.keys, r.Header.Get("Idempotency-Key"))
	c.mu.Unlock()
	if n < len(c.script) {
		c.script[n](w)
		return
	}
	c.svc.ServeHTTP(w, r)
}

func status(code int, headers ...string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.WriteHeader(code)
		w.Write([]byte("upstream says no"))
	}
}

func TestClient_retries(t *testing.T) {
	tests := []struct {
		name         string
		script       []func(http.ResponseWriter)
		wantAttempts int
		wantStatus   int // 0: success
	}{
		{"503 then ok", []func(http.ResponseWriter){status(503), status(502)}, 3, 0},
		{"429 with Retry-After", []func(http.ResponseWriter){status(429, "Retry-After", "0")}, 2, 0},
		{"504 then ok", []func(http.ResponseWriter){status(504)}, 2, 0},
		{"500 not retried", []func(http.ResponseWriter){status(500)}, 1, 500},
		{"400 not retried", []func(http.ResponseWriter){status(400)}, 1, 400},
		{"409 not retried", []func(http.ResponseWriter){status(409)}, 1, 409},
		{"retries exhausted", []func(http.ResponseWriter){status(503), status(503), status(503), status(503)}, 4, 503},
		{"Retry-After beyond the policy", []func(http.ResponseWriter){status(429, "Retry-After", "120")}, 1, 429},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			h, _ := router.NewHandler(&fakeService{}, router.WithAuthenticator(router.KeyAuthenticator(map[string]string{testKey: ""})))
			cs := &counting{script: tt.script, svc: h}
			srv := httptest.NewServer(cs)
			defer srv.Close()
			c := newTestClient(t, srv.URL)
			_, err := c.ValidateV2(context.Background(), requestFor(router.OpValidateV2).(*router.ValidateV2Request))
			if got := int(cs.attempt.Load()); got != tt.wantAttempts {
				t.Errorf("attempts %d, want %d", got, tt.wantAttempts)
			}
			for _, k := range cs.keys {
				if k == "" || k != cs.keys[0] {
					t.Errorf("Idempotency-Key per attempt %q, want one non-empty key reused", cs.keys)
					break
				}
			}
			var p *router.Error
			switch {
			case tt.wantStatus == 0 && err != nil:
				t.Errorf("error %v, want success", err)
			case tt.wantStatus != 0 && (!errors.As(err, &p) || p.Status != tt.wantStatus):
				t.Errorf("error %v, want a *router.Error with status %d", err, tt.wantStatus)
			case tt.wantStatus != 0 && (p.Detail != "upstream says no" || p.Code == ""):
				t.Errorf("synthesized problem %+v, want the body as detail and a code", p)
			}
		})
	}
}

func TestClient_connectionRefusedRetried(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now
	var attempts atomic.Int64
	hc := &http.Client{Transport: roundTripFunc(func(r *http.Request) (*http.Response, error) {
		attempts.Add(1)
		return http.DefaultTransport.RoundTrip(r)
	})}
	c := newTestClient(t, "http://"+addr, router.WithHTTPClient(hc))
	_, err = c.DelegateV1(context.Background(), requestFor(router.OpDelegateV1).(*router.DelegateV1Request))
	var p *router.Error
	if err == nil || errors.As(err, &p) {
		t.Fatalf("error %v, want a transport error", err)
	}
	if n := attempts.Load(); n != 4 {
		t.Errorf("attempts %d, want 4 (first + 3 retries)", n)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }

func TestClient_transportRefusalNotRetried(t *testing.T) {
	errRefused := errors.New("payment refused")
	var attempts atomic.Int64
	hc := &http.Client{Transport: roundTripFunc(func(*http.Request) (*http.Response, error) {
		attempts.Add(1)
		return nil, errRefused
	})}
	c := newTestClient(t, "http://127.0.0.1:1", router.WithHTTPClient(hc))
	_, err := c.DelegateV1(context.Background(), requestFor(router.OpDelegateV1).(*router.DelegateV1Request))
	if !errors.Is(err, errRefused) || attempts.Load() != 1 {
		t.Errorf("error %v after %d attempts, want the transport's own error after 1", err, attempts.Load())
	}
}

func TestClient_cancelDuringBackoff(t *testing.T) {
	attempted := make(chan struct{}, 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		attempted <- struct{}{}
		w.Header().Set("Retry-After", "20")
		w.WriteHeader(http.StatusServiceUnavailable)
	}))
	defer srv.Close()
	c := newTestClient(t, srv.URL, router.WithRetry(router.RetryPolicy{Max: 5, RetryAfterMax: time.Minute}))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() {
		_, err := c.DelegateV1(ctx, requestFor(router.OpDelegateV1).(*router.DelegateV1Request))
		done <- err
	}()
	<-attempted
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("error %v, want context.Canceled", err)
	}
	if n := len(attempted); n != 0 {
		t.Errorf("%d more attempts after cancelling, want 0", n)
	}
}

func TestClient_headersAndVariants(t *testing.T) {
	var mu sync.Mutex
	var got []*http.Request
	h, _ := router.NewHandler(&fakeService{}, router.WithAuthenticator(router.KeyAuthenticator(map[string]string{testKey: ""})),
		router.WithX402(func(next http.Handler) http.Handler { return next }))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Clone(context.Background()))
		mu.Unlock()
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	hc := &http.Client{Timeout: time.Minute}
	before := *hc
	c := newTestClient(t, srv.URL+"/", router.WithHTTPClient(hc), router.WithUserAgent("test-agent/1"), router.WithClientVariant(router.VariantTrial))
	const trace = "0af7651916cd43dd8448eb211c80319c"
	ctx := router.WithTraceID(context.Background(), trace)
	ctx = router.WithIdempotencyKey(ctx, "my-key")
	req := requestFor(router.OpDelegateV1).(*router.DelegateV1Request)
	if _, err := c.DelegateV1(ctx, req); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DelegateV1(router.WithVariant(ctx, router.VariantX402), req); err != nil {
		t.Fatal(err)
	}
	if _, err := c.ValidateV3(ctx, requestFor(router.OpValidateV3).(*router.ValidateV3Request)); !errors.Is(err, router.ErrNoVariant) {
		t.Errorf("v3 in the trial variant: %v, want ErrNoVariant", err)
	}
	if len(got) != 2 {
		t.Fatalf("%d requests reached the server, want 2", len(got))
	}
	trial, paid := got[0], got[1]
	checks := []struct{ name, got, want string }{
		{"trial path", trial.URL.Path, "/api/v1/trial/delegate"},
		{"x402 path", paid.URL.Path, "/api/v1/x402/delegate"},
		{"trial Authorization", trial.Header.Get("Authorization"), "Bearer " + testKey},
		{"x402 Authorization", paid.Header.Get("Authorization"), ""},
		{"User-Agent", trial.Header.Get("User-Agent"), "test-agent/1"},
		{"Idempotency-Key", trial.Header.Get("Idempotency-Key"), "my-key"},
		{"Content-Type", trial.Header.Get("Content-Type"), "application/json"},
		{"traceparent trace id", strings.Split(trial.Header.Get("traceparent")+"---", "-")[1], trace},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
		}
	}
	if hc.Timeout != before.Timeout || hc.Transport != before.Transport || hc.Jar != before.Jar || hc.CheckRedirect != nil {
		t.Errorf("the caller's *http.Client was modified: %+v, was %+v", hc, before)
	}
}

func TestClient_responseTooLarge(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(`{"task_result_output":"` + strings.Repeat("x", 2000) + `"}`))
	}))
	defer srv.Close()
	c := newTestClient(t, srv.URL, router.WithMaxResponseBytes(1000))
	_, err := c.DelegateV1(context.Background(), requestFor(router.OpDelegateV1).(*router.DelegateV1Request))
	if !errors.Is(err, router.ErrResponseTooLarge) {
		t.Errorf("error %v, want ErrResponseTooLarge", err)
	}
}

func TestClient_malformedResponse(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Write([]byte(`{"session_id": "not a number"`))
	}))
	defer srv.Close()
	c := newTestClient(t, srv.URL)
	_, err := c.DelegateV1(context.Background(), requestFor(router.OpDelegateV1).(*router.DelegateV1Request))
	if !errors.Is(err, router.ErrMalformedResponse) {
		t.Errorf("error %v, want ErrMalformedResponse", err)
	}
}

func TestNewClient_errors(t *testing.T) {
	tests := []struct {
		name string
		url  string
		opts []router.ClientOption
	}{
		{"relative URL", "/api", nil},
		{"ftp URL", "ftp://example.com", nil},
		{"no host", "http://", nil},
		{"query", "http://example.com/?a=b", nil},
		{"unknown variant", "http://example.com", []router.ClientOption{router.WithClientVariant("free")}},
		{"negative retries", "http://example.com", []router.ClientOption{router.WithRetry(router.RetryPolicy{Max: -1})}},
		{"negative limit", "http://example.com", []router.ClientOption{router.WithMaxResponseBytes(-1)}},
	}
	for _, tt := range tests {
		if c, err := router.NewClient(tt.url, tt.opts...); err == nil || c != nil {
			t.Errorf("%s: NewClient = %v, %v; want an error", tt.name, c, err)
		}
	}
	if _, err := (&router.Client{}).DelegateV1(context.Background(), nil); err == nil {
		t.Error("nil request: no error")
	}
}

// TestClient_WithSessionIDsAsStrings checks the bodies a Client sends:
// session ids as integers by default, as strings of digits with the
// option, and ids inside the caller's context or metadata as given.
func TestClient_WithSessionIDsAsStrings(t *testing.T) {
	var mu sync.Mutex
	var bodies []map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		dec := json.NewDecoder(r.Body)
		dec.UseNumber()
		var m map[string]any
		if err := dec.Decode(&m); err != nil {
			t.Errorf("body: %v", err)
		}
		mu.Lock()
		bodies = append(bodies, m)
		mu.Unlock()
		w.Header().Set("Content-Type", "application/json")
		// One answer with the members each of the three calls requires,
		// its verdict one of the call's, its consensus block of the
		// three replicas both calls that read one run.
		verdict := "VALID"
		if strings.Contains(r.URL.Path, "factcheck") {
			verdict = "TRUE"
		}
		w.Write([]byte(`{"session_id":7,"task_id":"t","task_result_output":"","verdict":"` + verdict + `","confidence":1,"evidence":{},"consensus":{"replicas":3}}`))
	}))
	t.Cleanup(srv.Close)

	ctx := context.Background()
	call := func(c *router.Client) {
		t.Helper()
		if _, err := c.DelegateV1(ctx, &router.DelegateV1Request{SessionID: 7, TaskRequestInput: "x"}); err != nil {
			t.Fatal(err)
		}
		v3 := &router.ValidateV3Request{SessionID: 4, Consensus: router.ConsensusRequest{Replicas: 3, SessionPool: []router.SessionID{1, 2}}}
		v3.Claim = router.Claim{Type: "t", Output: json.RawMessage(`"o"`)}
		v3.Metadata = map[string]any{"session_id": 5}
		if _, err := c.ValidateV3(ctx, v3); err != nil {
			t.Fatal(err)
		}
		fc := &router.FactcheckV1Request{Claim: "c", SessionPool: []router.SessionID{10, 11, 12}, Context: map[string]any{"session_pool": []int{1}}}
		if _, err := c.FactcheckV1(ctx, fc); err != nil {
			t.Fatal(err)
		}
	}
	n := func(s string) json.Number { return json.Number(s) }
	for _, tc := range []struct {
		opts []router.ClientOption
		want []map[string]any
	}{
		{nil, []map[string]any{
			{"session_id": n("7")},
			{"session_id": n("4"), "consensus": map[string]any{"session_pool": []any{n("1"), n("2")}}, "metadata": map[string]any{"session_id": n("5")}},
			{"session_pool": []any{n("10"), n("11"), n("12")}, "context": map[string]any{"session_pool": []any{n("1")}}},
		}},
		{[]router.ClientOption{router.WithSessionIDsAsStrings()}, []map[string]any{
			{"session_id": "7"},
			{"session_id": "4", "consensus": map[string]any{"session_pool": []any{"1", "2"}}, "metadata": map[string]any{"session_id": n("5")}},
			{"session_pool": []any{"10", "11", "12"}, "context": map[string]any{"session_pool": []any{n("1")}}},
		}},
	} {
		mu.Lock()
		bodies = nil
		mu.Unlock()
		call(newTestClient(t, srv.URL, tc.opts...))
		mu.Lock()
		got := bodies
		mu.Unlock()
		if len(got) != len(tc.want) {
			t.Fatalf("%d bodies, want %d", len(got), len(tc.want))
		}
		for i, want := range tc.want {
			for key, w := range want {
				g := got[i][key]
				if m, ok := w.(map[string]any); ok { // compare only the members named
					gm, _ := g.(map[string]any)
					for k, wv := range m {
						if !cmp.Equal(wv, gm[k]) {
							t.Errorf("options %d, body %d: %s.%s = %#v, want %#v", len(tc.opts), i, key, k, gm[k], wv)
						}
					}
					continue
				}
				if !cmp.Equal(w, g) {
					t.Errorf("options %d, body %d: %s = %#v, want %#v", len(tc.opts), i, key, g, w)
				}
			}
		}
	}
}

// TestClient_unservableNotRetried: replicas above the sessions of the
// router behind the handler is a 400 naming consensus.replicas, which the
// Client does not retry: one request reaches the server.
func TestClient_unservableNotRetried(t *testing.T) {
	var sessions []router.Session
	for i := range 3 {
		sessions = append(sessions, router.Session{ID: router.SessionID(i + 1), Worker: router.WorkerFunc(func(context.Context, *router.Job) (*router.Result, error) {
			return &router.Result{Verdict: router.VerdictValid}, nil
		})})
	}
	h, err := router.NewHandler(newEngine(t, sessions), router.WithAuthenticator(router.KeyAuthenticator(map[string]string{testKey: "tests"})))
	if err != nil {
		t.Fatal(err)
	}
	var requests atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		requests.Add(1)
		h.ServeHTTP(w, r)
	}))
	defer srv.Close()
	req := validateV3(5, "")
	req.Consensus.SessionPool = []router.SessionID{1, 2, 3}
	_, err = newTestClient(t, srv.URL).ValidateV3(context.Background(), req)
	p := asError(t, err, http.StatusBadRequest, "invalid_request")
	if diff := cmp.Diff([]string{"consensus.replicas"}, fields(p)); diff != "" {
		t.Errorf("fields (-want +got):\n%s", diff)
	}
	if n := requests.Load(); n != 1 {
		t.Errorf("%d requests reached the server, want 1 (no retry)", n)
	}
}
