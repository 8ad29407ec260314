package trust_test

// Shapes of response that the recomputation must read as the documents
// say: an arbitration that accepts a RETRY winner (9.3), a judged
// delegation's snapshot, which is its last validation's and groups the
// judges by label (9.4, 6.5), even when a later producer failed, and a
// median snapshot whose failed runs, counted as negative evidence, win
// (6.4, 6.6).

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// TestRecompute_arbitrationRetryWinner: two sessions say RETRY and one
// VALID at safe. RETRY is a strict majority, accepted as the tally's
// winner; an arbitration answers it INCONCLUSIVE (9.3), with no retry
// instructions, the confidence of two answers of three and the VALID run
// alone among the disagreements.
func TestRecompute_arbitrationRetryWinner(t *testing.T) {
	for _, repOn := range []bool{false, true} {
		behs := []fakeSession{{verdict: router.VerdictRetry}, {verdict: router.VerdictRetry}, {verdict: router.VerdictValid}}
		rig := newRecomputeRig(t, behs, repOn, nil)
		c := recomputeRequest("arbitration", "safe", false, false)
		raw, resp := rig.mustPost(c)
		type summary struct {
			Status       trust.Status
			Confidence   float64
			Disagreeing  []int
			Instructions bool
		}
		got := summary{Status: resp.Status, Confidence: resp.Confidence, Instructions: resp.RetryInstructions != nil}
		for _, d := range resp.Evidence.Disagreements {
			got.Disagreeing = append(got.Disagreeing, d.Replica)
		}
		want := summary{Status: trust.StatusInconclusive, Confidence: consensus.Posterior(2, 1), Disagreeing: []int{2}}
		if d := cmp.Diff(want, got, cmpopts.EquateApprox(0, 1e-9)); d != "" {
			t.Errorf("reputation %v (-want +got):\n%s\n  body: %s", repOn, d, withoutReceipt(raw))
		}
		reportMismatches(t, "RETRY, RETRY, VALID", raw, rig.check(c, resp), map[string]int{})
	}
}

// TestRecompute_judgedSnapshotGroupsByLabel: a judged delegation at oracle
// whose five judges give three verdicts, weighed by records that differ.
// Its receipt's consensus snapshot is the last validation's (9.4), whose
// confidence 6.5 computes over the judges' labels, not the producers'
// texts: every judge's session answers the same text here, so counting
// by text would make one group of the dissenters.
func TestRecompute_judgedSnapshotGroupsByLabel(t *testing.T) {
	ctx := context.Background()
	book, err := reputation.New(nil, reputation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	verdicts := []router.Verdict{router.VerdictValid, router.VerdictValid, router.VerdictInvalid, router.VerdictRetry, router.VerdictNeedsSpec, router.VerdictInvalid}
	behs := make([]fakeSession, len(verdicts))
	for i, v := range verdicts {
		behs[i] = fakeSession{verdict: v, text: "red"}
	}
	// Records that differ: sessions 1 to 4 backed outcomes that were
	// wrong, 1 and 2 twice.
	scope := router.Scope(router.KindValidate, "qa")
	for _, ids := range [][]int64{{1, 2, 3, 4}, {1, 2}} {
		var ballots []reputation.Ballot
		for _, id := range ids {
			ballots = append(ballots, reputation.Ballot{Session: id, Backed: true})
		}
		if err := book.Feedback(ctx, scope, ballots, false); err != nil {
			t.Fatal(err)
		}
	}
	rig := newRecomputeRig(t, behs, true, []router.EngineOption{router.WithReputation(book)})
	c := recomputeRequest("delegation", "oracle", false, true)
	raw, resp := rig.mustPost(c)
	cs := snapshotOf(resp)
	if resp.Evidence.Judging == nil || cs == nil || cs.Strategy != "weighted" || len(cs.Weights) != 5 {
		t.Fatalf("judging %v, snapshot %+v; want a weighted snapshot of five judges\n  body: %s", resp.Evidence.Judging, cs, withoutReceipt(raw))
	}
	reportMismatches(t, "judged at oracle", raw, rig.check(c, resp), map[string]int{})
}

// TestRecompute_medianFailuresWin: at safe over a router that counts
// failed runs as negative evidence, one run times out and two answer 41
// and 43. The one failure is as many as the numbers that agree with the
// median, so the failures win (6.4, 6.6): the receipt's snapshot, the
// router's block, names no agreeing run and confidence 0, while the
// service's own tally, where failures are no votes, states one number of
// two.
func TestRecompute_medianFailuresWin(t *testing.T) {
	behs := []fakeSession{{hang: true}, {num: 41}, {num: 43}}
	rig := newRecomputeRig(t, behs, false, []router.EngineOption{router.WithFailureMode(consensus.FailuresNegative)})
	c := recomputeRequest("delegation", "safe", true, false)
	raw, resp := rig.mustPost(c)
	cs := snapshotOf(resp)
	if cs == nil {
		t.Fatal("no consensus snapshot")
	}
	type figures struct {
		Failures              string
		Agreeing              []int
		Confidence, Agreement float64
	}
	want := figures{Failures: "negative_evidence"}
	if d := cmp.Diff(want, figures{cs.Failures, cs.Agreeing, cs.Confidence, cs.Agreement}, cmpopts.EquateEmpty()); d != "" {
		t.Errorf("consensus snapshot (-want +got):\n%s", d)
	}
	if resp.Status != trust.StatusRetry || !approxEqual(resp.Confidence, consensus.Posterior(1, 1)) {
		t.Errorf("status %s, confidence %v; want RETRY, Posterior(1, 1)", resp.Status, resp.Confidence)
	}
	reportMismatches(t, "failures win", raw, rig.check(c, resp), map[string]int{})
}

// TestRecompute_judgedProducerFails: an adaptive judged delegation whose
// judges reject the first candidate and whose second producer fails.
// Every candidate produced was rejected: RETRY, no result, confidence 0
// (9.4); the receipt's consensus snapshot is the last validation's, the
// first candidate's, and states its confidence, while the last
// candidate, never judged, has none.
func TestRecompute_judgedProducerFails(t *testing.T) {
	behs := []fakeSession{{verdict: router.VerdictInvalid, text: "red"}, {fail: true}, {verdict: router.VerdictInvalid, text: "red"}, {verdict: router.VerdictInvalid, text: "red"}}
	rig := newRecomputeRig(t, behs, true, nil)
	for range 8 {
		c := recomputeRequest("delegation", "adaptive", false, true)
		raw, resp := rig.mustPost(c)
		j := resp.Evidence.Judging
		if j == nil || len(j.Candidates) != 2 || j.Candidates[0].Verdict != trust.StatusInvalid || j.Candidates[1].Label != router.LabelError {
			continue // the failing session produced first, or judged nothing
		}
		cs := snapshotOf(resp)
		if cs == nil {
			t.Fatal("no consensus snapshot")
		}
		type figures struct {
			Status               trust.Status
			Result               string
			Confidence, Snapshot float64
		}
		want := figures{trust.StatusRetry, "null", 0, j.Candidates[0].Confidence}
		if d := cmp.Diff(want, figures{resp.Status, string(resp.Result), resp.Confidence, cs.Confidence}); d != "" {
			t.Errorf("(-want +got):\n%s", d)
		}
		reportMismatches(t, "second producer fails", raw, rig.check(c, resp), map[string]int{})
		return
	}
	t.Fatal("no call rejected its first candidate and failed to produce a second")
}
