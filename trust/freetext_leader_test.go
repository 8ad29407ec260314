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

// TestService_Call_judgedLeader: the judges of an adaptive judged
// delegation are an adaptive validation, which a leader decides alone
// and one led call in every (WithLeaderCheck(1)) checks. The delegation
// names the leader whose verdict it states, and counts and charges the
// runs its verdict counts, the producer's and the leader's: the check is
// a step of its own, in evidence.checked, and not among the verdicts.
func TestService_Call_judgedLeader(t *testing.T) {
	ctx := context.Background()
	book, err := reputation.New(nil, reputation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e, err := router.NewEngine(routertest.Sessions(1, 3, probeWorker(wordings[0]), probeWorker(changedYear), probeWorker(wordings[1])),
		router.WithReputation(book))
	if err != nil {
		t.Fatal(err)
	}
	scope := router.Scope(router.KindValidate, probeRequest(trust.PolicyAdaptive, trust.AgreementJudged).Task.Type)
	won := []reputation.Ballot{{Session: 1, Backed: true}, {Session: 2, Opposed: true}}
	for range 4 {
		if err := book.Feedback(ctx, scope, won, true); err != nil {
			t.Fatal(err)
		}
	}
	s, err := trust.New(e, trust.WithLeaderCheck(1), trust.WithoutExams())
	if err != nil {
		t.Fatal(err)
	}
	for range 6 {
		resp, err := s.Call(ctx, probeRequest(trust.PolicyAdaptive, trust.AgreementJudged))
		if err != nil {
			t.Fatal(err)
		}
		ev := resp.Evidence
		var counted, checked int
		for _, st := range ev.Steps {
			if st.Check {
				checked += len(st.Sessions)
			} else {
				counted += len(st.Sessions)
			}
		}
		if checked == 0 {
			continue // session 1 produced: no leader among the judges
		}
		if diff := cmp.Diff(&reputation.Lead{Session: 1, Won: 4}, ev.Leader, recordOnly); diff != "" {
			t.Errorf("evidence.leader (-want +got):\n%s", diff)
		}
		if ev.Leader != nil && (ev.Leader.Level != reputation.MaxLeadLevel || ev.Leader.Margin < reputation.DefaultLeadMargin) {
			t.Errorf("evidence.leader %+v; want it led at 1/2 by its margin over the other judge", ev.Leader)
		}
		got := []int{ev.Launched, ev.Redundancy, len(ev.Verdicts), ev.Answered, ev.Checked}
		if diff := cmp.Diff([]int{counted, counted, counted, counted, checked}, got); diff != "" {
			t.Errorf("launched, redundancy, verdicts, answered, checked against the steps (-want +got):\n%s\nverdicts %v", diff, ev.Verdicts)
		}
		if resp.Status != trust.StatusValid || ev.Calibration == nil || ev.Calibration.Read() != resp.Confidence {
			t.Errorf("status %s, confidence %v, calibration %+v; want the leader's VALID read on its map", resp.Status, resp.Confidence, ev.Calibration)
		}
		return
	}
	t.Fatal("no judged delegation was led")
}
