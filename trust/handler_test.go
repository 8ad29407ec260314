package trust_test

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
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

const testKey = "test-key"

// fakeCaller answers every call with a VALID response derived from the
// request, counts calls and records the trace id each call saw. A test can
// replace the answer with hook.
type fakeCaller struct {
	calls atomic.Int64
	hook  func(ctx context.Context, req *trust.Request) (*trust.Response, error)

	mu      sync.Mutex
	traces  []string
	callers []string
}

func (f *fakeCaller) Call(ctx context.Context, req *trust.Request) (*trust.Response, error) {
	n := f.calls.Add(1)
	f.mu.Lock()
	f.traces = append(f.traces, router.TraceIDFrom(ctx))
	f.callers = append(f.callers, trust.CallerFrom(ctx))
	f.mu.Unlock()
	if f.hook != nil {
		return f.hook(ctx, req)
	}
	return &trust.Response{
		Status: trust.StatusValid, Result: req.Task.ClaimedResult, Confidence: 0.9,
		Evidence:       trust.Evidence{Redundancy: int(n), Verdicts: []router.Label{}, Disagreements: []trust.Disagreement{}, Steps: []trust.Step{}},
		TraceID:        router.TraceIDFrom(ctx),
		ServiceVersion: trust.Version,
	}, nil
}

func (f *fakeCaller) lastTrace() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.traces) == 0 {
		return ""
	}
	return f.traces[len(f.traces)-1]
}

// newServer serves c through a Handler that knows testKey as "alice", with
// opts added.
func newServer(t *testing.T, c trust.Caller, opts ...trust.HandlerOption) *httptest.Server {
	t.Helper()
	opts = append([]trust.HandlerOption{trust.WithAuthenticator(router.KeyAuthenticator(map[string]string{testKey: "alice"}))}, opts...)
	h, err := trust.NewHandler(c, opts...)
	if err != nil {
		t.Fatalf("NewHandler: %v", err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv
}

// fastRetry retries quickly, so tests do not wait.
var fastRetry = router.RetryPolicy{Max: 2, WaitMin: time.Millisecond, WaitMax: 2 * time.Millisecond, RetryAfterMax: time.Second}

func newClient(t *testing.T, url string, opts ...trust.ClientOption) *trust.Client {
	t.Helper()
	opts = append([]trust.ClientOption{trust.WithAPIKey(testKey), trust.WithRetry(fastRetry)}, opts...)
	c, err := trust.NewClient(url, opts...)
	if err != nil {
		t.Fatalf("NewClient: %v", err)
	}
	return c
}

func validationRequest() *trust.Request {
	return &trust.Request{
		Mode:   trust.ModeValidation,
		Policy: trust.PolicySafe,
		Task: trust.Task{
			Type:          "summary",
			Input:         router.NewStringInput("The Eiffel Tower is in Paris."),
			ClaimedResult: json.RawMessage(`"The tower is in Paris."`),
		},
	}
}

// unanimous is a deterministic router.Service: every replica of a
// version 3 call votes VALID, or delegates the answer "done".
type unanimous struct{ router.Service }

func (unanimous) ValidateV3(_ context.Context, req *router.ValidateV3Request) (*router.ValidateV3Response, error) {
	n := req.Consensus.Replicas
	resp := &router.ValidateV3Response{RequestID: req.RequestID, Verdict: router.VerdictValid, Confidence: 0.9, Reasons: []string{"matches"}}
	resp.Consensus = router.ConsensusResponse{Replicas: n, Agreement: 1, Strategy: router.AggregationMajority, Confidence: 0.9}
	for i := range n {
		resp.Consensus.Verdicts = append(resp.Consensus.Verdicts, router.Label(router.VerdictValid))
		resp.Evidence.Runs = append(resp.Evidence.Runs, router.Run{Replica: i, SessionID: router.SessionID(i + 1), TaskID: fmt.Sprint("t", i), Label: router.Label(router.VerdictValid), Confidence: 0.95})
	}
	return resp, nil
}

func (unanimous) DelegateV3(_ context.Context, req *router.DelegateV3Request) (*router.DelegateV3Response, error) {
	n := req.Consensus.Replicas
	resp := &router.DelegateV3Response{TaskID: "t", Result: json.RawMessage(`"done"`)}
	resp.Consensus = router.ConsensusResponse{Replicas: n, Agreement: 1, Strategy: router.AggregationMajority, Confidence: 0.9}
	for i := range n {
		resp.Consensus.Verdicts = append(resp.Consensus.Verdicts, router.LabelOK)
		resp.Evidence.Runs = append(resp.Evidence.Runs, router.Run{Replica: i, SessionID: router.SessionID(i + 1), TaskID: fmt.Sprint("t", i), Label: router.LabelOK, Confidence: 0.95})
	}
	return resp, nil
}

// The same requests give the same answers from the Service in process and
// through Client → Handler → Service over loopback, apart from the trace
// id (fresh per call).
func TestClient_Call_matchesService(t *testing.T) {
	svc, err := trust.New(unanimous{})
	if err != nil {
		t.Fatal(err)
	}
	c := newClient(t, newServer(t, svc).URL)

	delegation := &trust.Request{Mode: trust.ModeDelegation, Task: trust.Task{Type: "qa", Input: router.NewStringInput("what is 2+2?")}}
	arbitration := validationRequest()
	arbitration.Mode = trust.ModeArbitration
	arbitration.Task.DisputeContext = json.RawMessage(`{"buyer":"the tower is in Rome"}`)
	ignore := cmpopts.IgnoreFields(trust.Response{}, "TraceID")
	for _, req := range []*trust.Request{validationRequest(), delegation, arbitration} {
		for _, p := range []trust.Policy{trust.PolicyFast, trust.PolicySafe, trust.PolicyOracle, trust.PolicyAdaptive} {
			req.Policy = p
			want, werr := svc.Call(context.Background(), req)
			got, gerr := c.Call(context.Background(), req)
			if werr != nil || gerr != nil {
				t.Fatalf("%s %s: errors %v (direct), %v (client)", req.Mode, p, werr, gerr)
			}
			if diff := cmp.Diff(want, got, ignore); diff != "" {
				t.Errorf("%s %s: direct and over HTTP differ (-direct +client):\n%s", req.Mode, p, diff)
			}
			if got.TraceID == "" || got.TraceID == want.TraceID {
				t.Errorf("%s %s: trace ids %q (direct) and %q (client), want two fresh ones", req.Mode, p, want.TraceID, got.TraceID)
			}
		}
	}
}

func TestClient_Call_traceID(t *testing.T) {
	f := &fakeCaller{}
	srv := newServer(t, f)
	c := newClient(t, srv.URL)
	const trace = "4bf92f3577b34da6a3ce929d0e0e4736"
	resp, err := c.Call(router.WithTraceID(context.Background(), trace), validationRequest())
	if err != nil {
		t.Fatal(err)
	}
	if got := f.lastTrace(); got != trace {
		t.Errorf("trace id seen by the Caller = %q, want %q", got, trace)
	}
	if resp.TraceID != trace {
		t.Errorf("response trace_id = %q, want %q", resp.TraceID, trace)
	}
	// Without one, the Caller sees none (the Service then makes its own).
	if _, err := c.Call(context.Background(), validationRequest()); err != nil {
		t.Fatal(err)
	}
	if got := f.lastTrace(); got != "" {
		t.Errorf("trace id without a traceparent = %q, want none", got)
	}
}

func TestClient_Call_auth(t *testing.T) {
	f := &fakeCaller{}
	srv := newServer(t, f)
	for _, tt := range []struct {
		name string
		opts []trust.ClientOption
	}{
		{"no key", []trust.ClientOption{trust.WithAPIKey("")}},
		{"wrong key", []trust.ClientOption{trust.WithAPIKey("nope")}},
	} {
		_, err := newClient(t, srv.URL, tt.opts...).Call(context.Background(), validationRequest())
		var p *trust.Error
		if !errors.As(err, &p) || p.Status != http.StatusUnauthorized || p.Code != "unauthorized" || p.RequestID == "" {
			t.Errorf("%s: %v, want a 401 unauthorized *trust.Error with a request id", tt.name, err)
		}
	}
	if n := f.calls.Load(); n != 0 {
		t.Errorf("Caller ran %d times for refused requests, want 0", n)
	}
}

func TestClient_Call_trialLimit(t *testing.T) {
	f := &fakeCaller{}
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	srv := newServer(t, f, trust.WithTrialLimit(router.TrialLimit{Rate: 1.0 / 60, Burst: 1}), trust.WithHandlerClock(func() time.Time { return now }))
	c := newClient(t, srv.URL, trust.WithAPIKey(""), trust.WithClientVariant(router.VariantTrial))
	if _, err := c.Call(context.Background(), validationRequest()); err != nil {
		t.Fatalf("first trial call: %v", err)
	}
	_, err := c.Call(context.Background(), validationRequest())
	var p *trust.Error
	if !errors.As(err, &p) || p.Status != http.StatusTooManyRequests || p.Code != "rate_limited" {
		t.Fatalf("second trial call: %v, want a 429 rate_limited *trust.Error", err)
	}
	// The normal route is not limited.
	for range 3 {
		if _, err := newClient(t, srv.URL).Call(context.Background(), validationRequest()); err != nil {
			t.Fatalf("normal route: %v", err)
		}
	}
	if n := f.calls.Load(); n != 4 {
		t.Errorf("Caller ran %d times, want 4", n)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if diff := cmp.Diff([]string{"trial:ip:127.0.0.1", "alice", "alice", "alice"}, f.callers); diff != "" {
		t.Errorf("callers named to the Caller (-want +got):\n%s", diff)
	}
}

func TestClient_Call_idempotentReplay(t *testing.T) {
	f := &fakeCaller{}
	srv := newServer(t, f)
	c := newClient(t, srv.URL)
	ctx := trust.WithIdempotencyKey(context.Background(), "order-42")
	first, err := c.Call(ctx, validationRequest())
	if err != nil {
		t.Fatal(err)
	}
	again, err := c.Call(ctx, validationRequest())
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(first, again); diff != "" {
		t.Errorf("replayed response differs (-first +again):\n%s", diff)
	}
	if n := f.calls.Load(); n != 1 {
		t.Errorf("Caller ran %d times, want 1", n)
	}
	other := validationRequest()
	other.Policy = trust.PolicyOracle
	_, err = c.Call(ctx, other)
	var p *trust.Error
	if !errors.As(err, &p) || p.Status != http.StatusUnprocessableEntity {
		t.Errorf("same key, other request: %v, want a 422 *trust.Error", err)
	}
	// Without a key of the caller's, each call runs.
	for range 2 {
		if _, err := c.Call(context.Background(), validationRequest()); err != nil {
			t.Fatal(err)
		}
	}
	if n := f.calls.Load(); n != 3 {
		t.Errorf("Caller ran %d times, want 3", n)
	}
}

func TestClient_Call_fieldErrors(t *testing.T) {
	f := &fakeCaller{}
	c := newClient(t, newServer(t, f).URL)
	arbitration := validationRequest()
	arbitration.Mode = trust.ModeArbitration
	noClaim := validationRequest()
	noClaim.Task.ClaimedResult = nil
	tests := []struct {
		name       string
		req        *trust.Request
		wantFields []string
	}{
		{"validation without a claimed result", noClaim, []string{"task.claimed_result"}},
		{"arbitration without a dispute context", arbitration, []string{"task.dispute_context"}},
		{"empty", &trust.Request{}, []string{"mode", "policy"}},
	}
	for _, tt := range tests {
		_, err := c.Call(context.Background(), tt.req)
		var p *trust.Error
		if !errors.As(err, &p) || p.Status != http.StatusBadRequest || p.Code != "invalid_request" {
			t.Errorf("%s: %v, want a 400 invalid_request *trust.Error", tt.name, err)
			continue
		}
		var fields []string
		for _, fe := range p.Errors {
			fields = append(fields, fe.Field)
		}
		if diff := cmp.Diff(tt.wantFields, fields); diff != "" {
			t.Errorf("%s: field paths (-want +got):\n%s", tt.name, diff)
		}
	}
	if n := f.calls.Load(); n != 0 {
		t.Errorf("Caller ran %d times for invalid requests, want 0", n)
	}
}

func TestClient_Call_callerErrors(t *testing.T) {
	f := &fakeCaller{}
	c := newClient(t, newServer(t, f).URL)
	tests := []struct {
		name       string
		hook       func(context.Context, *trust.Request) (*trust.Response, error)
		wantStatus int
		wantCode   string
	}{
		{"problem", func(context.Context, *trust.Request) (*trust.Response, error) {
			return nil, &trust.Error{Status: http.StatusConflict, Code: "disagreement", Title: "Conflict", Detail: "replicas disagree"}
		}, http.StatusConflict, "disagreement"},
		{"plain error", func(context.Context, *trust.Request) (*trust.Response, error) {
			return nil, errors.New("signing key at /secret/hunter2")
		}, http.StatusInternalServerError, "internal"},
		{"nil response", func(context.Context, *trust.Request) (*trust.Response, error) { return nil, nil }, http.StatusInternalServerError, "internal"},
		{"panic", func(context.Context, *trust.Request) (*trust.Response, error) { panic("hunter2") }, http.StatusInternalServerError, "internal"},
	}
	for _, tt := range tests {
		f.hook = tt.hook
		_, err := c.Call(context.Background(), validationRequest())
		var p *trust.Error
		if !errors.As(err, &p) || p.Status != tt.wantStatus || string(p.Code) != tt.wantCode {
			t.Errorf("%s: %v, want a %d %s *trust.Error", tt.name, err, tt.wantStatus, tt.wantCode)
		}
		if err != nil && strings.Contains(err.Error(), "hunter2") {
			t.Errorf("%s: %v reveals the error's internals", tt.name, err)
		}
	}
}

// rawPost sends body to path as JSON with the test key.
func rawPost(t *testing.T, url, body string, headers ...string) (*http.Response, string) {
	t.Helper()
	req, err := http.NewRequest("POST", url, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+testKey)
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
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
	return resp, string(b)
}

func TestHandler_wire(t *testing.T) {
	srv := newServer(t, &fakeCaller{})
	valid := `{"mode":"validation","policy":"fast","task":{"claimed_result":"x"}}`
	tests := []struct {
		name       string
		method     string
		path       string
		body       string
		headers    []string
		wantStatus int
		wantCode   string
		wantField  string
	}{
		{"ok", "POST", trust.CallPath, valid, nil, 200, "", ""},
		{"wrong type", "POST", trust.CallPath, `{"mode":"validation","policy":"fast","task":{"type":7}}`, nil, 400, "invalid_request", "task.type"},
		{"malformed", "POST", trust.CallPath, `{"mode":`, nil, 400, "malformed_json", ""},
		{"not JSON", "POST", trust.CallPath, valid, []string{"Content-Type", "text/plain"}, 415, "unsupported_media_type", ""},
		{"GET", "GET", trust.CallPath, "", nil, 405, "method_not_allowed", ""},
		{"unknown path", "POST", "/api/v4/trusts", valid, nil, 404, "not_found", ""},
		{"x402 without middleware", "POST", trust.X402CallPath, valid, nil, 501, "x402_not_configured", ""},
	}
	for _, tt := range tests {
		req, err := http.NewRequest(tt.method, srv.URL+tt.path, strings.NewReader(tt.body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+testKey)
		for i := 0; i+1 < len(tt.headers); i += 2 {
			req.Header.Set(tt.headers[i], tt.headers[i+1])
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.wantStatus {
			t.Errorf("%s: status %d (%s), want %d", tt.name, resp.StatusCode, body, tt.wantStatus)
			continue
		}
		if resp.Header.Get("X-Request-Id") == "" {
			t.Errorf("%s: no X-Request-Id", tt.name)
		}
		if tt.wantCode == "" {
			continue
		}
		var p trust.Error
		if err := json.Unmarshal(body, &p); err != nil || string(p.Code) != tt.wantCode || p.RequestID != resp.Header.Get("X-Request-Id") {
			t.Errorf("%s: body %s, want a problem with code %s and the request id", tt.name, body, tt.wantCode)
		}
		if tt.wantField != "" && (len(p.Errors) == 0 || p.Errors[0].Field != tt.wantField) {
			t.Errorf("%s: field errors %+v, want %s", tt.name, p.Errors, tt.wantField)
		}
	}

	// A repeat with the same Idempotency-Key is marked as replayed.
	first, _ := rawPost(t, srv.URL+trust.CallPath, valid, "Idempotency-Key", "k")
	again, _ := rawPost(t, srv.URL+trust.CallPath, valid, "Idempotency-Key", "k")
	if first.Header.Get("Idempotent-Replayed") != "" || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("Idempotent-Replayed %q then %q, want empty then true", first.Header.Get("Idempotent-Replayed"), again.Header.Get("Idempotent-Replayed"))
	}
}

func TestNewHandler_errors(t *testing.T) {
	lim := router.RateLimiterFunc(func(context.Context, string, time.Time) (bool, time.Duration, error) { return true, 0, nil })
	tests := []struct {
		name string
		c    trust.Caller
		opts []trust.HandlerOption
	}{
		{"nil caller", nil, nil},
		{"negative body limit", &fakeCaller{}, []trust.HandlerOption{trust.WithMaxBodyBytes(-1)}},
		{"limiter and limit", &fakeCaller{}, []trust.HandlerOption{trust.WithRateLimiter(lim), trust.WithTrialLimit(router.TrialLimit{Burst: 2})}},
	}
	for _, tt := range tests {
		if h, err := trust.NewHandler(tt.c, tt.opts...); err == nil || h != nil {
			t.Errorf("%s: NewHandler = %v, %v; want an error", tt.name, h, err)
		}
	}
}

func TestNewClient_errors(t *testing.T) {
	tests := []struct {
		name string
		url  string
		opts []trust.ClientOption
	}{
		{"relative URL", "/api", nil},
		{"query", "http://example.com/?a=b", nil},
		{"unknown variant", "http://example.com", []trust.ClientOption{trust.WithClientVariant("free")}},
		{"negative retries", "http://example.com", []trust.ClientOption{trust.WithRetry(router.RetryPolicy{Max: -1})}},
	}
	for _, tt := range tests {
		if c, err := trust.NewClient(tt.url, tt.opts...); err == nil || c != nil {
			t.Errorf("%s: NewClient = %v, %v; want an error", tt.name, c, err)
		}
	}
	c, err := trust.NewClient("http://example.com")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Call(context.Background(), nil); err == nil {
		t.Error("nil request: no error")
	}
}
