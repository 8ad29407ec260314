package router_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

// TestFaults_workersOverLoopback runs every kind of faulty worker behind
// Client → Handler → Engine over loopback. For each fault, a version 3
// call pairs one honest session with two faulty ones (no early quorum is
// possible, so the faulty runs are all waited for): the call returns
// before the caller's deadline, the host goes on serving, each faulty run
// is an ERROR or TIMEOUT vote that says why, and every worker that honours
// its context has returned once the call has.
func TestFaults_workersOverLoopback(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	stuck := make(chan struct{}) // holds the worker that ignores its context
	defer close(stuck)
	honest := routertest.Verdict(router.VerdictValid)
	tests := []struct {
		name       string
		fault      func() router.Worker
		want       router.Label
		ignoresCtx bool
	}{
		{"panic", func() router.Worker { return routertest.Panic("boom") }, router.LabelError, false},
		{"panic with an error value", func() router.Worker { return routertest.Panic(errors.New("boom")) }, router.LabelError, false},
		{"error", func() router.Worker { return routertest.Fail(errors.New("model down")) }, router.LabelError, false},
		{"hang", routertest.Hang, router.LabelTimeout, false},
		{"slow", func() router.Worker { return routertest.Slow(honest, time.Hour) }, router.LabelTimeout, false},
		{"garbage verdict", func() router.Worker { return routertest.Fixed(router.Result{Verdict: "SURE"}) }, router.LabelError, false},
		{"factcheck verdict on a validation", func() router.Worker { return routertest.Verdict(router.VerdictTrue) }, router.LabelError, false},
		{"nil result", func() router.Worker {
			return router.WorkerFunc(func(context.Context, *router.Job) (*router.Result, error) { return nil, nil })
		}, router.LabelError, false},
		{"confidence out of range", func() router.Worker {
			return routertest.Fixed(router.Result{Verdict: router.VerdictValid, Confidence: 7})
		}, router.LabelError, false},
		{"confidence NaN", func() router.Worker {
			return routertest.Fixed(router.Result{Verdict: router.VerdictValid, Confidence: math.NaN()})
		}, router.LabelError, false},
		{"ignores its context", func() router.Worker {
			return router.WorkerFunc(func(context.Context, *router.Job) (*router.Result, error) {
				<-stuck
				return nil, errors.New("released")
			})
		}, router.LabelTimeout, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			good := routertest.NewRecorder(honest)
			bad1, bad2 := routertest.NewRecorder(tt.fault()), routertest.NewRecorder(tt.fault())
			e := newEngine(t, routertest.Sessions(1, 3, good, bad1, bad2), router.WithStopGrace(20*time.Millisecond))
			c := loopbackClient(t, e)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()

			req := validateV3(3, router.DisagreeReturnAll)
			req.Policy.TimeoutMS = 100
			got, err := c.ValidateV3(ctx, req)
			if ctx.Err() != nil {
				t.Fatalf("the call outlived the caller's deadline: %v", err)
			}
			if err != nil {
				t.Fatalf("ValidateV3: %v, want an answer from the honest run", err)
			}
			if got.Verdict != router.VerdictValid || got.Consensus.Replicas != 3 {
				t.Errorf("verdict %s over %d replicas, want VALID over 3", got.Verdict, got.Consensus.Replicas)
			}
			runs := got.Evidence.Runs
			if len(runs) != 3 {
				t.Fatalf("%d runs in the evidence, want 3", len(runs))
			}
			for _, r := range runs {
				if r.SessionID == 1 {
					if r.Label != router.Label(router.VerdictValid) || r.Error != "" {
						t.Errorf("honest run = %s %q, want VALID", r.Label, r.Error)
					}
					continue
				}
				if r.Label != tt.want || r.Error == "" {
					t.Errorf("session %d run = %s with error %q, want %s with the reason", r.SessionID, r.Label, r.Error, tt.want)
				}
			}
			for _, rec := range []*routertest.Recorder{good, bad1, bad2} {
				if rec.Calls.Load() != 1 {
					t.Errorf("a session ran %d times, want once", rec.Calls.Load())
				}
				if !tt.ignoresCtx && rec.Returned.Load() != rec.Calls.Load() {
					t.Errorf("a worker is still running after the call returned (%d of %d returned)", rec.Returned.Load(), rec.Calls.Load())
				}
			}
			if tt.want == router.LabelTimeout && !tt.ignoresCtx && bad1.Cancelled.Load()+bad2.Cancelled.Load() != 2 {
				t.Errorf("timed-out workers observed %d cancellations, want 2", bad1.Cancelled.Load()+bad2.Cancelled.Load())
			}

			// The host still serves: a plain call on the honest session works.
			if _, err := c.ValidateV2(ctx, validateV2(1)); err != nil {
				t.Errorf("ValidateV2 after the faults: %v", err)
			}
		})
	}
}

// TestFaults_delegateGarbage checks the faults only a delegation can
// show: an output encoding/json cannot encode, and more steps than the
// budget. Each is an ERROR run with its reason, and the honest answer wins.
func TestFaults_delegateGarbage(t *testing.T) {
	honest := routertest.Answer(map[string]int{"sum": 6})
	tests := []struct {
		name  string
		fault router.Worker
	}{
		{"unencodable output", routertest.Fixed(router.Result{Output: math.Inf(1), Confidence: 1})},
		{"channel output", routertest.Fixed(router.Result{Output: make(chan int), Confidence: 1})},
		{"steps over the budget", routertest.Fixed(router.Result{Output: 6, Steps: make([]router.Step, 4)})},
		{"no output", routertest.Verdict(router.VerdictValid)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e := newEngine(t, routertest.Sessions(1, 3, honest, tt.fault, tt.fault))
			c := loopbackClient(t, e)
			req := &router.DelegateV3Request{DelegateTask: delegateV2(0).DelegateTask, Consensus: router.ConsensusRequest{Replicas: 3}}
			got, err := c.DelegateV3(context.Background(), req)
			if err != nil {
				t.Fatalf("DelegateV3: %v", err)
			}
			var sum struct{ Sum int }
			if json.Unmarshal(got.Result, &sum); sum.Sum != 6 {
				t.Errorf("result = %s, want the honest answer", got.Result)
			}
			for _, r := range got.Evidence.Runs {
				if r.SessionID != 1 && (r.Label != router.LabelError || r.Error == "") {
					t.Errorf("session %d run = %s %q, want ERROR with the reason", r.SessionID, r.Label, r.Error)
				}
			}
		})
	}
}

// TestFaults_liarIsOutvoted checks that a lying worker is a vote, not an
// error: it shows in the evidence as the minority, and the majority wins.
func TestFaults_liarIsOutvoted(t *testing.T) {
	honest := routertest.Verdict(router.VerdictValid)
	e := newEngine(t, routertest.Sessions(1, 5, honest, routertest.Lie(honest), honest, routertest.Lie(honest), honest))
	got, err := loopbackClient(t, e).ValidateV3(context.Background(), validateV3(5, router.DisagreeReturnAll))
	if err != nil {
		t.Fatalf("ValidateV3: %v", err)
	}
	var invalid int
	for _, r := range got.Evidence.Runs {
		if r.Label == router.Label(router.VerdictInvalid) {
			invalid++
		}
	}
	// An early quorum may cancel a liar still running; it never wins.
	if got.Verdict != router.VerdictValid || invalid > 2 {
		t.Errorf("verdict %s with %d INVALID runs, want VALID with at most 2", got.Verdict, invalid)
	}
}

// loopbackClient serves svc with NewHandler on loopback and returns a
// Client of it that does not retry.
func loopbackClient(t *testing.T, svc router.Service) *router.Client {
	t.Helper()
	h, err := router.NewHandler(svc, router.WithAuthenticator(router.KeyAuthenticator(map[string]string{"k": "tests"})))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c, err := router.NewClient(srv.URL, router.WithAPIKey("k"), router.WithRetry(router.RetryPolicy{}))
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// TestEngine_workerFaults runs misbehaving workers through validate v2
// and delegate v2: each must give a 502 carrying an ERROR run that says
// why, never a panic.
func TestEngine_workerFaults(t *testing.T) {
	steps := func(n int) []router.Step { return make([]router.Step, n) }
	tests := []struct {
		name      string
		delegate  bool
		worker    router.Worker
		wantError string // a fragment of the run's error
	}{
		{"error", false, routertest.Fail(errors.New("model down")), "model down"},
		{"panic", false, routertest.Panic("boom"), "the worker panicked"},
		{"panic with error", false, routertest.Panic(errors.New("nil map")), "the worker panicked"},
		{"nil result", false, router.WorkerFunc(func(context.Context, *router.Job) (*router.Result, error) { return nil, nil }), "neither a result nor an error"},
		{"no verdict", false, routertest.Fixed(router.Result{Confidence: 1}), "no verdict"},
		{"unknown verdict", false, routertest.Fixed(router.Result{Verdict: "MAYBE"}), `"MAYBE"`},
		{"factcheck verdict", false, routertest.Verdict(router.VerdictTrue), `"TRUE"`},
		{"confidence above 1", false, routertest.Fixed(router.Result{Verdict: router.VerdictValid, Confidence: 1.5}), "confidence 1.5"},
		{"confidence NaN", false, routertest.Fixed(router.Result{Verdict: router.VerdictValid, Confidence: math.NaN()}), "confidence NaN"},
		{"infinite cost", false, routertest.Fixed(router.Result{Verdict: router.VerdictValid, Usage: &router.Usage{Cost: math.Inf(1)}}), "cost"},
		{"negative cost", false, routertest.Fixed(router.Result{Verdict: router.VerdictValid, Usage: &router.Usage{PromptTokens: 10, Cost: -0.5}}), "usage cost -0.5 is negative"},
		{"negative tokens", true, routertest.Fixed(router.Result{Output: 6, Usage: &router.Usage{PromptTokens: 10, CompletionTokens: -400}}), "usage completion_tokens -400 is negative"},
		{"step output not JSON", false, routertest.Fixed(router.Result{Verdict: router.VerdictValid, Steps: []router.Step{{Output: json.RawMessage(`{`)}}}), "steps[0].output"},
		{"steps over the default budget", false, routertest.Fixed(router.Result{Verdict: router.VerdictValid, Steps: steps(router.DefaultMaxSteps + 1)}), "budget is 100"},
		{"steps over max_steps", true, routertest.Fixed(router.Result{Output: 6, Steps: steps(4)}), "4 steps; the budget is 3"},
		{"no output", true, routertest.Fixed(router.Result{Steps: steps(1)}), "no output"},
		{"output not encodable", true, routertest.Answer(make(chan int)), "cannot be encoded"},
		{"output raw JSON broken", true, routertest.Answer(json.RawMessage(`{"a":`)), "cannot be encoded"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
			e := one(t, tt.worker)
			var err error
			if tt.delegate {
				_, err = e.DelegateV2(context.Background(), delegateV2(1))
			} else {
				_, err = e.ValidateV2(context.Background(), validateV2(1))
			}
			p := asError(t, err, http.StatusBadGateway, "all_replicas_failed")
			runs := errorRuns(t, p)
			if len(runs) != 1 || runs[0].Label != router.LabelError || !strings.Contains(runs[0].Error, tt.wantError) {
				t.Errorf("runs = %+v, want one ERROR run whose error mentions %q", runs, tt.wantError)
			}
			if _, err := json.Marshal(p); err != nil {
				t.Errorf("the error does not encode: %v", err)
			}
			if !strings.Contains(p.Detail, tt.wantError) {
				t.Errorf("detail = %q, want the cause %q", p.Detail, tt.wantError)
			}
			if tt.delegate {
				return
			}
			// Version 3 names the cause in its detail too, with the session.
			_, err = e.ValidateV3(context.Background(), validateV3(1, router.DisagreeFailHard))
			p = asError(t, err, http.StatusBadGateway, "all_replicas_failed")
			if !strings.Contains(p.Detail, "session 1: ") || !strings.Contains(p.Detail, tt.wantError) {
				t.Errorf("v3 detail = %q, want the cause %q of session 1", p.Detail, tt.wantError)
			}
		})
	}
}

func TestEngine_maxStepsWithinBudget(t *testing.T) {
	w := routertest.Fixed(router.Result{Output: 6, Steps: make([]router.Step, 3)})
	if _, err := one(t, w).DelegateV2(context.Background(), delegateV2(1)); err != nil {
		t.Errorf("3 steps under execution.max_steps 3: %v", err)
	}
	e := one(t, routertest.Fixed(router.Result{Verdict: router.VerdictValid, Steps: make([]router.Step, 500)}), router.WithMaxSteps(0))
	if _, err := e.ValidateV2(context.Background(), validateV2(1)); err != nil {
		t.Errorf("500 steps with WithMaxSteps(0): %v", err)
	}
}

// TestEngine_panicIsLogged: a panic value can hold internals, so it goes
// to the engine's log, with the stack, and never into the run evidence
// the caller gets.
func TestEngine_panicIsLogged(t *testing.T) {
	var buf bytes.Buffer
	logger := slog.New(slog.NewJSONHandler(&buf, nil))
	_, err := one(t, routertest.Panic("password=hunter2"), router.WithEngineLogger(logger)).ValidateV2(context.Background(), validateV2(1))
	p := asError(t, err, http.StatusBadGateway, "all_replicas_failed")
	if !strings.Contains(buf.String(), `"level":"ERROR"`) || !strings.Contains(buf.String(), `"panic":"password=hunter2"`) || !strings.Contains(buf.String(), `"stack":`) {
		t.Errorf("log = %s, want the panic value and stack at ERROR", buf.String())
	}
	body, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Contains(string(body), "hunter2") {
		t.Errorf("the caller's error %s holds the panic value", body)
	}
}
