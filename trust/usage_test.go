package trust_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// spends returns a worker that reports tokens of usage and answers
// verdict, which may be one no validation takes (an ERROR run that spent
// its tokens all the same).
func spends(verdict router.Verdict, tokens int64) router.Worker {
	return router.WorkerFunc(func(context.Context, *router.Job) (*router.Result, error) {
		return &router.Result{Verdict: verdict, Usage: &router.Usage{PromptTokens: tokens, CompletionTokens: tokens, Cost: float64(tokens)}}, nil
	})
}

// TestService_adaptiveUsageOverLoopback: over a remote router, a run
// whose worker answers ERROR after spending tokens runs once, and the
// usage of the response adds up every run, the failed one included, as
// it does in process.
func TestService_adaptiveUsageOverLoopback(t *testing.T) {
	bad := routertest.NewRecorder(spends("BOGUS", 100))
	e, err := router.NewEngine(routertest.Sessions(1, 3, spends(router.VerdictValid, 1), bad, spends(router.VerdictValid, 10)))
	if err != nil {
		t.Fatal(err)
	}
	c := remoteRouter(t, e)
	s, err := trust.New(c, trust.WithSessionPool(2, 1, 3), trust.WithoutReputation())
	if err != nil {
		t.Fatal(err)
	}
	resp, err := s.Call(t.Context(), request(trust.ModeValidation, trust.PolicyAdaptive))
	if err != nil {
		t.Fatal(err)
	}
	if want := []router.Label{router.LabelError, "VALID", "VALID"}; !cmp.Equal(resp.Evidence.Verdicts, want) {
		t.Errorf("verdicts %v, want %v", resp.Evidence.Verdicts, want)
	}
	if n := bad.Calls.Load(); n != 1 {
		t.Errorf("the failing worker ran %d times for one run, want 1", n)
	}
	want := &router.Usage{PromptTokens: 111, CompletionTokens: 111, Cost: 111}
	if diff := cmp.Diff(want, resp.Evidence.Usage); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
}

// TestService_checkUsage: a leader's check is a step of the response,
// but its usage, like its run, is not among the call's: evidence.usage
// is the leader's run's alone.
func TestService_checkUsage(t *testing.T) {
	book, err := reputation.New(nil, reputation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := router.NewEngine(routertest.Sessions(1, 1, spends(router.VerdictValid, 1), spends(router.VerdictInvalid, 10)), router.WithReputation(book))
	if err != nil {
		t.Fatal(err)
	}
	scope := router.Scope(router.KindValidate, request(trust.ModeValidation, trust.PolicyAdaptive).Task.Type)
	for range 4 { // session 1 leads (see luckyLeader)
		if err := book.Feedback(t.Context(), scope, []reputation.Ballot{{Session: 1, Backed: true}, {Session: 2, Opposed: true}}, true); err != nil {
			t.Fatal(err)
		}
	}
	s, err := trust.New(e, trust.WithLeaderCheck(1))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := s.Call(t.Context(), request(trust.ModeValidation, trust.PolicyAdaptive))
	if err != nil {
		t.Fatal(err)
	}
	if resp.Evidence.Leader == nil || resp.Evidence.Checked != 1 {
		t.Fatalf("leader %+v, %d checked; want a led call with its check", resp.Evidence.Leader, resp.Evidence.Checked)
	}
	if diff := cmp.Diff(&router.Usage{PromptTokens: 1, CompletionTokens: 1, Cost: 1}, resp.Evidence.Usage); diff != "" {
		t.Errorf("usage (-want +got):\n%s", diff)
	}
}
