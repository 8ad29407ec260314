package router_test

import (
	"context"
	"errors"
	"testing"
	"time"

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
