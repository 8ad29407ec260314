package router_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

func TestEngine_health(t *testing.T) {
	clk := newClock()
	rec := routertest.NewRecorder(routertest.Sequence(
		routertest.Fail(errors.New("down")),
		routertest.Fail(errors.New("down")),
		routertest.Fail(errors.New("still down")),
		routertest.Verdict(router.VerdictValid),
	))
	e := one(t, rec, router.WithEngineClock(clk.Now), router.WithHealth(2, 10*time.Second))
	ctx := context.Background()
	steps := []struct {
		advance   time.Duration
		wantCode  router.Code // "" for success
		wantCalls int64
	}{
		{0, "all_replicas_failed", 1},
		{0, "all_replicas_failed", 2},           // second failure in a row: cools down
		{0, "unavailable", 2},                   // skipped, the worker is not called
		{9 * time.Second, "unavailable", 2},     // still cooling
		{time.Second, "all_replicas_failed", 3}, // half open: tried, fails, cools at once
		{0, "unavailable", 3},
		{10 * time.Second, "", 4}, // half open: succeeds
		{0, "", 5},                // restored
	}
	for i, s := range steps {
		clk.Advance(s.advance)
		_, err := e.ValidateV2(ctx, validateV2(1))
		var code router.Code
		if p := (*router.Error)(nil); errors.As(err, &p) {
			code = p.Code
		} else if err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
		if code != s.wantCode || rec.Calls.Load() != s.wantCalls {
			t.Errorf("step %d: code %q after %d worker calls, want %q after %d", i, code, rec.Calls.Load(), s.wantCode, s.wantCalls)
		}
	}
}

func TestEngine_healthIgnoresCallerDeadline(t *testing.T) {
	clk := newClock()
	e := one(t, routertest.Hang(), router.WithEngineClock(clk.Now), router.WithHealth(1, time.Hour))
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
	defer cancel()
	if _, err := e.ValidateV2(ctx, validateV2(1)); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("error = %v, want the caller's context.DeadlineExceeded", err)
	}
	// The session is not to blame for the caller's short deadline, nor
	// for a policy.timeout_ms the caller chose.
	req := validateV2(1)
	req.Policy.TimeoutMS = 10
	for range 2 {
		_, err := e.ValidateV2(context.Background(), req)
		asError(t, err, http.StatusGatewayTimeout, "timeout")
	}
	// The engine's own bound is the session's to keep.
	e = one(t, routertest.Hang(), router.WithEngineClock(clk.Now), router.WithHealth(1, time.Hour), router.WithReplicaTimeout(10*time.Millisecond))
	_, err := e.ValidateV2(context.Background(), validateV2(1))
	asError(t, err, http.StatusGatewayTimeout, "timeout") // tried, so still healthy before
	_, err = e.ValidateV2(context.Background(), validateV2(1))
	asError(t, err, http.StatusServiceUnavailable, "unavailable") // its own timeout counted
}

// TestEngine_cancelledRunsLeaveHealthAlone checks that a run cut short by
// an early quorum neither counts as a failure nor clears earlier ones.
func TestEngine_cancelledRunsLeaveHealthAlone(t *testing.T) {
	V := routertest.Verdict(valid)
	flaky := routertest.NewRecorder(routertest.Sequence(routertest.Fail(errDown), routertest.Hang(), routertest.Fail(errDown)))
	e := newEngine(t, routertest.Sessions(1, 3, V, V, flaky), router.WithHealth(2, time.Hour))
	ctx := context.Background()
	for i, policy := range []router.DisagreementPolicy{router.DisagreeReturnAll, router.DisagreeBestEffort, router.DisagreeReturnAll} {
		if _, err := e.ValidateV3(ctx, validateV3(3, policy)); err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
	}
	if flaky.Cancelled.Load() != 1 {
		t.Fatalf("the second call did not cancel the hanging run (cancelled %d)", flaky.Cancelled.Load())
	}
	// Two failures, with a cancelled run between them: session 3 cools.
	_, err := e.ValidateV3(ctx, validateV3(3, router.DisagreeReturnAll))
	asError(t, err, http.StatusServiceUnavailable, "insufficient_sessions")
}

// TestEngine_cancelledRunWithoutAnswerLeavesHealthAlone: an early quorum
// (2 of 3 VALID) cancels the third replica, whose worker, once cancelled,
// returns neither a result nor an error. The run is CANCELLED, and its
// session is charged no failure.
func TestEngine_cancelledRunWithoutAnswerLeavesHealthAlone(t *testing.T) {
	V := routertest.Verdict(valid)
	sloppy := router.WorkerFunc(func(ctx context.Context, _ *router.Job) (*router.Result, error) {
		<-ctx.Done()
		return nil, nil // gives up without saying why
	})
	e := newEngine(t, routertest.Sessions(1, 3, V, V, sloppy), router.WithHealth(1, time.Hour))
	resp, err := e.ValidateV3(context.Background(), validateV3(3, router.DisagreeBestEffort))
	if err != nil {
		t.Fatal(err)
	}
	var label router.Label
	for _, r := range resp.Evidence.Runs {
		if r.SessionID == 3 {
			label = r.Label
		}
	}
	st, _ := e.Status(context.Background())
	if s3 := st.Sessions[2]; label != router.LabelCancelled || s3.Failures != 0 || s3.Health != router.HealthHealthy {
		t.Errorf("session 3's run is reported %s, and its health is %s with %d failure(s); want CANCELLED, healthy with none", label, s3.Health, s3.Failures)
	}
}

func TestEngine_Status(t *testing.T) {
	clk := newClock()
	var failing atomic.Bool
	failing.Store(true)
	flaky := router.WorkerFunc(func(ctx context.Context, job *router.Job) (*router.Result, error) {
		if failing.Load() {
			return nil, errDown
		}
		return &router.Result{Verdict: valid}, nil
	})
	e := newEngine(t, []router.Session{
		{ID: 1, Worker: flaky, Pool: "a", Tiers: []router.Tier{router.TierSafe}},
		{ID: 2, Worker: routertest.Verdict(valid)},
	}, router.WithEngineClock(clk.Now), router.WithHealth(2, time.Minute))
	ctx := context.Background()
	health := func(want router.SessionStatus) {
		t.Helper()
		st, err := e.Status(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(st.Sessions) != 2 || st.Calls != nil {
			t.Fatalf("status %+v, want two sessions and no calls", st)
		}
		if diff := cmp.Diff(want, st.Sessions[0]); diff != "" {
			t.Errorf("session 1 (-want +got):\n%s", diff)
		}
		if s := st.Sessions[1]; s.ID != 2 || s.Health != router.HealthHealthy || s.Pool != "" || s.Tiers != nil {
			t.Errorf("session 2 = %+v, want healthy, no pool, every tier", s)
		}
	}
	one := &router.ValidateV2Request{SessionID: 1}
	one.Claim = router.Claim{Type: "t", Output: json.RawMessage(`1`)}
	base := router.SessionStatus{ID: 1, Pool: "a", Tiers: []router.Tier{router.TierSafe}}

	want := base
	want.Health = router.HealthHealthy
	health(want)
	e.ValidateV2(ctx, one)
	want.Failures = 1
	health(want) // one failure is under the threshold
	e.ValidateV2(ctx, one)
	want.Health, want.Failures, want.CoolingUntil = router.HealthCoolingDown, 2, clk.Now().Add(time.Minute).UTC()
	health(want)
	clk.Advance(time.Minute)
	want.Health, want.CoolingUntil = router.HealthHalfOpen, time.Time{}
	health(want)
	failing.Store(false)
	if _, err := e.ValidateV2(ctx, one); err != nil {
		t.Fatalf("half-open session: %v", err)
	}
	want.Health, want.Failures = router.HealthHealthy, 0
	health(want)
}
