package router_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

// TestEngine_callerTimeoutIsNotTheSessions: requests whose own
// policy.timeout_ms is too short for any worker (1 ms) time out, but a
// timeout the caller asked for says nothing of the sessions: none goes
// to cool down, and the next caller, with no timeout of its own, is
// served.
func TestEngine_callerTimeoutIsNotTheSessions(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	slowValid := routertest.Slow(routertest.Verdict(valid), 50*time.Millisecond)
	e := newEngine(t, routertest.Sessions(1, 3, slowValid, slowValid, slowValid), router.WithHealth(2, time.Hour))
	ctx := context.Background()
	for range 3 {
		req := validateV3(3, router.DisagreeBestEffort)
		req.Policy.TimeoutMS = 1
		var p *router.Error
		if _, err := e.ValidateV3(ctx, req); !errors.As(err, &p) || p.Code != "timeout" {
			t.Fatalf("a call with timeout_ms 1: %v, want a timeout", err)
		}
		// A version 2 call on one session times out the same way.
		v2 := &router.ValidateV2Request{SessionID: 1, ValidateTask: req.ValidateTask}
		if _, err := e.ValidateV2(ctx, v2); !errors.As(err, &p) || p.Code != "timeout" {
			t.Fatalf("a version 2 call with timeout_ms 1: %v, want a timeout", err)
		}
	}
	st, err := e.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range st.Sessions {
		if s.Health != router.HealthHealthy || s.Failures != 0 {
			t.Errorf("session %d after timeouts the callers asked for: %s with %d failures, want healthy with none", s.ID, s.Health, s.Failures)
		}
	}
	got, err := e.ValidateV3(ctx, validateV3(3, router.DisagreeBestEffort))
	if err != nil || got.Verdict != valid {
		t.Fatalf("the next caller: %+v, %v; want VALID", got, err)
	}
}

func TestEngine_timeout(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	rec := routertest.NewRecorder(routertest.Hang())
	req := validateV2(1)
	req.Policy.TimeoutMS = 20
	_, err := one(t, rec).ValidateV2(context.Background(), req)
	p := asError(t, err, http.StatusGatewayTimeout, "timeout")
	if runs := errorRuns(t, p); len(runs) != 1 || runs[0].Label != router.LabelTimeout {
		t.Errorf("runs = %+v, want one TIMEOUT run", runs)
	}
	if got := rec.Cancelled.Load(); got != 1 {
		t.Errorf("the hanging worker observed %d cancellations by the time the call returned, want 1", got)
	}
}

func TestEngine_callTimeout(t *testing.T) {
	rec := routertest.NewRecorder(routertest.Hang())
	_, err := one(t, rec, router.WithCallTimeout(20*time.Millisecond)).ValidateV2(context.Background(), validateV2(1))
	asError(t, err, http.StatusGatewayTimeout, "timeout")
	if got := rec.Cancelled.Load(); got != 1 {
		t.Errorf("worker observed %d cancellations, want 1", got)
	}
}

// TestEngine_abandonsWorkerIgnoringContext checks the documented limit: a
// worker that ignores its context is abandoned after the stop grace, and
// its goroutine ends only when it returns.
func TestEngine_abandonsWorkerIgnoringContext(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	release := make(chan struct{})
	stubborn := routertest.NewRecorder(router.WorkerFunc(func(context.Context, *router.Job) (*router.Result, error) {
		<-release
		return &router.Result{Verdict: router.VerdictValid}, nil
	}))
	var buf bytes.Buffer
	e := one(t, stubborn, router.WithStopGrace(5*time.Millisecond), router.WithEngineLogger(slog.New(slog.NewTextHandler(&buf, nil))))
	req := validateV2(1)
	req.Policy.TimeoutMS = 20
	_, err := e.ValidateV2(context.Background(), req)
	asError(t, err, http.StatusGatewayTimeout, "timeout")
	if got := stubborn.Returned.Load(); got != 0 {
		t.Errorf("the stubborn worker returned %d times before release, want 0", got)
	}
	if !strings.Contains(buf.String(), "abandoning") {
		t.Errorf("log = %q, want a warning about the abandoned worker", buf.String())
	}
	close(release)
	for stubborn.Returned.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
}

func TestEngine_callerCancels(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	rec := routertest.NewRecorder(routertest.Hang())
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for rec.Calls.Load() == 0 {
			time.Sleep(time.Millisecond)
		}
		cancel()
	}()
	_, err := one(t, rec).ValidateV2(ctx, validateV2(1))
	if !errors.Is(err, context.Canceled) {
		t.Errorf("error = %v, want context.Canceled", err)
	}
	if got := rec.Cancelled.Load(); got != 1 {
		t.Errorf("worker observed %d cancellations, want 1", got)
	}
}

// TestEngine_callerDeadlineKeepsVotes: under the caller's deadline, with
// two votes that do not settle the call and a worker that ignores its
// context, ValidateV3 answers from the votes in, by the deadline alone
// (routertest.DeadlineOnly), the stuck replica TIMEOUT; with no vote in, a 504
// *Error with code timeout.
func TestEngine_callerDeadlineKeepsVotes(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	release := make(chan struct{})
	stubborn := routertest.NewRecorder(router.WorkerFunc(func(context.Context, *router.Job) (*router.Result, error) {
		<-release
		return &router.Result{Verdict: router.VerdictValid}, nil
	}))
	defer func() {
		close(release)
		for stubborn.Returned.Load() < stubborn.Calls.Load() {
			time.Sleep(time.Millisecond)
		}
	}()
	e := newEngine(t, []router.Session{{ID: 1, Worker: routertest.Verdict(valid)}, {ID: 2, Worker: routertest.Verdict(router.VerdictInvalid)}, {ID: 3, Worker: stubborn}})
	resp, err := e.ValidateV3(routertest.DeadlineOnly(time.Second), validateV3(3, ""))
	if err != nil {
		t.Fatalf("ValidateV3: %v, want the answer of the two votes", err)
	}
	if diff := cmp.Diff([]router.Label{"VALID", "INVALID", router.LabelTimeout}, resp.Consensus.Verdicts); diff != "" {
		t.Errorf("verdicts (-want +got):\n%s", diff)
	}

	e = newEngine(t, []router.Session{{ID: 3, Worker: stubborn}})
	_, err = e.ValidateV3(routertest.DeadlineOnly(time.Second), validateV3(1, ""))
	asError(t, err, http.StatusGatewayTimeout, "timeout")
}
