package router_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

// total sums every point of a counter, whatever its attributes.
func total(m map[string]int64) int64 {
	var n int64
	for _, v := range m {
		n += v
	}
	return n
}

// counted returns the total of the counter called name, 0 when it has
// recorded nothing yet.
func (o *observed) counted(t *testing.T, name string) int64 {
	t.Helper()
	for _, sm := range o.Metrics(t).ScopeMetrics {
		for _, m := range sm.Metrics {
			if m.Name == name {
				return total(sums(t, m.Data))
			}
		}
	}
	return 0
}

// noRunsInFlight fails t unless every run launched was counted finished:
// "launched minus runs" is the runs in flight (docs/OBSERVABILITY.md).
func noRunsInFlight(t *testing.T, o *observed) {
	t.Helper()
	launched, finished := o.counted(t, "vouch.router.runs.launched"), o.counted(t, "vouch.router.runs")
	if launched != finished {
		t.Errorf("vouch.router.runs.launched = %d, vouch.router.runs = %d: %d runs forever 'in flight'", launched, finished, launched-finished)
	}
}

// TestEngine_telemetryFailedCallRuns: a version 3 call whose replicas
// all fail (502 all_replicas_failed) launched 3 runs, and counts 3
// finished runs and 3 worker errors.
func TestEngine_telemetryFailedCallRuns(t *testing.T) {
	o := newObserved(t)
	down := routertest.Fail(errors.New("down"))
	e := newEngine(t, routertest.Sessions(1, 3, down, down, down), router.WithEngineTelemetry(o.TracerProvider, o.MeterProvider))
	_, err := e.ValidateV3(context.Background(), validateV3(3, router.DisagreeBestEffort))
	asError(t, err, 502, "all_replicas_failed")
	noRunsInFlight(t, o)
	if n := o.counted(t, "vouch.worker.errors"); n != 3 {
		t.Errorf("vouch.worker.errors = %d, want 3", n)
	}
}

// TestEngine_telemetryDisagreementRuns: the same for a fail_hard call
// whose replicas disagree (409).
func TestEngine_telemetryDisagreementRuns(t *testing.T) {
	o := newObserved(t)
	valid, invalid := routertest.Verdict(router.VerdictValid), routertest.Verdict(router.VerdictInvalid)
	e := newEngine(t, routertest.Sessions(1, 3, valid, invalid, invalid), router.WithEngineTelemetry(o.TracerProvider, o.MeterProvider))
	_, err := e.ValidateV3(context.Background(), validateV3(3, router.DisagreeFailHard))
	asError(t, err, 409, "disagreement")
	noRunsInFlight(t, o)
}

// TestEngine_telemetryCancelledCallRuns: the same for a call whose
// caller gives up while every replica runs.
func TestEngine_telemetryCancelledCallRuns(t *testing.T) {
	o := newObserved(t)
	h := routertest.NewRecorder(routertest.Hang())
	e := newEngine(t, routertest.Sessions(1, 3, h, h, h), router.WithEngineTelemetry(o.TracerProvider, o.MeterProvider))
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		for h.Calls.Load() < 3 {
			time.Sleep(time.Millisecond) // polls: every replica is running
		}
		cancel()
	}()
	_, err := e.ValidateV3(ctx, validateV3(3, router.DisagreeBestEffort))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	noRunsInFlight(t, o)
}

// TestEngine_telemetryRefusedCallLaunchesNothing: a call refused before
// any replica runs (503 insufficient_sessions: two of three sessions
// cooling down) counts no run launched.
func TestEngine_telemetryRefusedCallLaunchesNothing(t *testing.T) {
	o := newObserved(t)
	down := routertest.Fail(errors.New("down"))
	ok := routertest.Verdict(router.VerdictValid)
	e := newEngine(t, routertest.Sessions(1, 3, ok, down, down), router.WithHealth(1, 1e12),
		router.WithEngineTelemetry(o.TracerProvider, o.MeterProvider))
	// Cool sessions 2 and 3 down with one failed single run each.
	for _, id := range []router.SessionID{2, 3} {
		e.ValidateV2(context.Background(), &router.ValidateV2Request{SessionID: id, ValidateTask: validateV3(1, "").ValidateTask})
	}
	before := o.counted(t, "vouch.router.runs.launched")
	_, err := e.ValidateV3(context.Background(), validateV3(3, router.DisagreeBestEffort))
	asError(t, err, 503, "insufficient_sessions")
	if after := o.counted(t, "vouch.router.runs.launched"); after != before {
		t.Errorf("a call refused before any replica ran counted %d runs launched", after-before)
	}
	noRunsInFlight(t, o)
}
