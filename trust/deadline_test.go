package trust_test

import (
	"context"
	"errors"
	"net/http"
	"slices"
	"strings"
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
	// The retry it advises is for more time, at the same tier: a tier that
	// runs more would need more time still.
	if ri := resp.RetryInstructions; resp.Status != trust.StatusRetry || ri == nil || ri.Policy != trust.PolicySafe ||
		!strings.Contains(ri.Reason, "1 of the 3 runs ran out of time") {
		t.Errorf("%s, retry instructions %+v; want RETRY at safe, saying one run of three ran out of time", resp.Status, ri)
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

// TestService_Call_remoteRouterDeadline: over a remote router, an
// adaptive run that the caller's deadline cut short is a TIMEOUT, a
// failed run, as over router.Engine: not an ERROR, and no vote.
func TestService_Call_remoteRouterDeadline(t *testing.T) {
	release := make(chan struct{})
	defer close(release)
	e, err := router.NewEngine(routertest.Sessions(1, 2, stuck(release), routertest.Verdict(router.VerdictValid)))
	if err != nil {
		t.Fatal(err)
	}
	c := remoteRouter(t, e)
	svc, err := trust.New(c, trust.WithSessionPool(1, 2), trust.WithoutReputation())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), time.Second)
	defer cancel()
	resp, err := svc.Call(ctx, &trust.Request{Mode: trust.ModeValidation, Policy: trust.PolicyAdaptive,
		Task: trust.Task{Type: "summary", Input: router.NewStringInput("x"), ClaimedResult: trust.JSON("x")}})
	if err != nil {
		t.Fatalf("%v, want the answer of the vote in", err)
	}
	ev := resp.Evidence
	if want := []router.Label{router.LabelTimeout, "VALID"}; resp.Status != trust.StatusRetry || !slices.Equal(ev.Verdicts, want) || ev.Failed != 1 || ev.Answered != 1 {
		t.Errorf("%s, verdicts %v, %d answered, %d failed; want RETRY, %v, one vote and one failure", resp.Status, ev.Verdicts, ev.Answered, ev.Failed, want)
	}
}
