package trust_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// stuck returns a worker that ignores its context and answers only when
// release is closed.
func stuck(release <-chan struct{}) router.Worker {
	return router.WorkerFunc(func(context.Context, *router.Job) (*router.Result, error) {
		<-release
		return &router.Result{Verdict: router.VerdictInvalid}, nil
	})
}

// TestService_Call_callerDeadline: with the caller's deadline on the
// context, two votes in that do not settle the call and one worker that
// ignores its context, a safe call answers from the votes in, the stuck
// run TIMEOUT, by the deadline alone (routertest.DeadlineOnly).
func TestService_Call_callerDeadline(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	e, err := router.NewEngine(routertest.Sessions(1, 3, routertest.Verdict(router.VerdictValid), routertest.Verdict(router.VerdictInvalid), stuck(release)))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := trust.New(e)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := svc.Call(routertest.DeadlineOnly(time.Second), &trust.Request{Mode: trust.ModeValidation, Policy: trust.PolicySafe,
		Task: trust.Task{Type: "summary", Input: router.NewStringInput("x"), ClaimedResult: trust.JSON("x")}})
	if err != nil {
		t.Fatalf("%v, want the answer of the votes in", err)
	}
	ev := resp.Evidence
	if want := []router.Label{router.LabelTimeout}; ev.Answered != 2 || ev.Failed != 1 || !slices.Contains(ev.Verdicts, want[0]) {
		t.Errorf("%s: %d answered, %d failed (%v); want two votes and one TIMEOUT", resp.Status, ev.Answered, ev.Failed, ev.Verdicts)
	}
}

// TestService_Call_callerDeadlineNoVote: when no vote is in at the
// caller's deadline, the call fails with a *trust.Error with a code, not
// a bare context error, by the deadline alone (routertest.DeadlineOnly).
func TestService_Call_callerDeadlineNoVote(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	w := stuck(release)
	e, err := router.NewEngine(routertest.Sessions(1, 3, w, w, w))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := trust.New(e)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []trust.Policy{trust.PolicyFast, trust.PolicySafe, trust.PolicyAdaptive} {
		_, err = svc.Call(routertest.DeadlineOnly(time.Second), &trust.Request{Mode: trust.ModeValidation, Policy: p,
			Task: trust.Task{Type: "summary", Input: router.NewStringInput("x"), ClaimedResult: trust.JSON("x")}})
		var terr *trust.Error
		if !errors.As(err, &terr) || terr.Status != http.StatusGatewayTimeout || terr.Code == "" {
			t.Errorf("%s: err %v (%T), want a 504 *trust.Error with a code", p, err, err)
		}
	}
}
