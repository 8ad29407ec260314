package trust_test

// The receipt of an adaptive delegation, recomputed from its snapshots
// (10.3, 6.6): the pooled tally over a router that keeps reputation states
// the decision's confidence, read on policy_snapshot.calibration and, for
// an open answer with no outcome, policy_snapshot.plurality; without
// reputation it recomputes by 6.4 alone; its replicas are the runs
// launched, any count from 1 to 5.

import (
	"context"
	"testing"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/trust"
)

// parseReceipt parses resp's inline receipt and returns it with its policy
// and consensus snapshots, which must be present.
func parseReceipt(t *testing.T, resp *trust.Response) (*receipt.Receipt, *receipt.PolicySnapshot, *receipt.ConsensusSnapshot) {
	t.Helper()
	rc, err := receipt.Parse(resp.Receipt)
	if err != nil {
		t.Fatal(err)
	}
	if rc.PolicySnapshot == nil || rc.ConsensusSnapshot == nil {
		t.Fatalf("policy snapshot %+v, consensus snapshot %+v", rc.PolicySnapshot, rc.ConsensusSnapshot)
	}
	return rc, rc.PolicySnapshot, rc.ConsensusSnapshot
}

// fiveSaying returns five sessions that answer the text s and the number
// n.
func fiveSaying(s string, n any) []fakeSession {
	behs := make([]fakeSession, 5)
	for i := range behs {
		behs[i] = fakeSession{text: s, num: n}
	}
	return behs
}

// TestRecompute_adaptiveSnapshotStatesPlurality: five sessions answer red;
// with reputation on and no outcome reported, the adaptive delegation's
// pooled snapshot (strategy majority) states the decision's confidence,
// PluralityPosteriorAt of policy_snapshot.plurality, the conservative
// number of policy_snapshot.calibration, rather than 6.4's count.
func TestRecompute_adaptiveSnapshotStatesPlurality(t *testing.T) {
	rig := newRecomputeRig(t, fiveSaying("red", 42), true, nil)
	c := recomputeRequest("delegation", "adaptive", false, false)
	raw, resp := rig.mustPost(c)
	rc, ps, cs := parseReceipt(t, resp)
	if cs.Strategy != "majority" || ps.Plurality == nil || ps.Calibration == nil || len(ps.Calibration.Points) != 0 {
		t.Fatalf("strategy %q, plurality %+v, calibration %+v; want majority, a plurality, no point", cs.Strategy, ps.Plurality, ps.Calibration)
	}
	p := ps.Plurality
	pp := consensus.PluralityPosteriorAt(p.Groups, 0, p.Coincidence, p.Reliability)
	if cs.Confidence != rc.Decision.Confidence || !approxEqual(cs.Confidence, pp) || !approxEqual(cs.Confidence, readCalibration(basisOf(ps.Calibration))) {
		t.Errorf("snapshot confidence %v; decision %v, PluralityPosteriorAt(%v, 0, %v, %v) = %v, calibration reads %v",
			cs.Confidence, rc.Decision.Confidence, p.Groups, p.Coincidence, p.Reliability, pp, readCalibration(basisOf(ps.Calibration)))
	}
	answers, _ := snapshotCounts(cs)
	a := len(cs.Agreeing)
	if want := posteriorExact(a, answers-a); !approxEqual(ps.Calibration.Uncalibrated, want) {
		t.Errorf("calibration.uncalibrated %v; the snapshot's count gives Posterior(%d, %d) = %v", ps.Calibration.Uncalibrated, a, answers-a, want)
	}
	reportMismatches(t, "five say red", raw, rig.check(c, resp), map[string]int{})
}

// TestRecompute_adaptiveSnapshotWithoutReputation: the same panel with
// reputation off; the pooled snapshot's agreement and confidence follow from
// its verdicts and agreeing alone, as 6.4 recomputes them.
func TestRecompute_adaptiveSnapshotWithoutReputation(t *testing.T) {
	rig := newRecomputeRig(t, fiveSaying("red", 42), false, nil)
	c := recomputeRequest("delegation", "adaptive", false, false)
	raw, resp := rig.mustPost(c)
	rc, ps, cs := parseReceipt(t, resp)
	if cs.Strategy != "majority" || ps.Calibration != nil {
		t.Fatalf("strategy %q, calibration %+v; want majority, none", cs.Strategy, ps.Calibration)
	}
	answers, _ := snapshotCounts(cs)
	a := len(cs.Agreeing)
	if want := posteriorExact(a, answers-a); !approxEqual(cs.Confidence, want) || cs.Confidence != rc.Decision.Confidence || !approxEqual(cs.Agreement, float64(a)/float64(answers)) {
		t.Errorf("snapshot agreement %v, confidence %v (decision %v); 6.4: %d of %d, Posterior(%d, %d) = %v", cs.Agreement, cs.Confidence, rc.Decision.Confidence, a, answers, a, answers-a, want)
	}
	reportMismatches(t, "five say red, no reputation", raw, rig.check(c, resp), map[string]int{})
}

// TestRecompute_adaptiveNumericSnapshotCalibrated: five sessions answer 42.
// Once one outcome of an adaptive numeric delegation is reported, the next
// call's pooled snapshot (strategy median) states the calibrated
// confidence, policy_snapshot.calibration read on its point, and the
// snapshot's numbers give that basis's number before calibration,
// Posterior(agreeing, numbers − agreeing).
func TestRecompute_adaptiveNumericSnapshotCalibrated(t *testing.T) {
	rig := newRecomputeRig(t, fiveSaying("red", 42), true, nil)
	c := recomputeRequest("delegation", "adaptive", true, false)
	_, first := rig.mustPost(c)
	if err := rig.svc.Feedback(trust.WithCaller(context.Background(), "alice"), first.TraceID, true); err != nil {
		t.Fatal(err)
	}
	raw, resp := rig.mustPost(c)
	rc, ps, cs := parseReceipt(t, resp)
	pc := ps.Calibration
	if cs.Strategy != "median" || pc == nil || pc.Basis != "outcomes" || len(pc.Points) == 0 {
		t.Fatalf("strategy %q, calibration %+v; want median, calibrated on outcomes", cs.Strategy, pc)
	}
	read := readCalibration(basisOf(pc))
	if cs.Confidence != rc.Decision.Confidence || !approxEqual(cs.Confidence, read) {
		t.Errorf("snapshot confidence %v; decision %v, policy_snapshot.calibration %+v reads %v", cs.Confidence, rc.Decision.Confidence, *pc, read)
	}
	n, _ := checkMedian(new(mismatches), cs)
	a := len(cs.Agreeing)
	if want := posteriorExact(a, n-a); !approxEqual(pc.Uncalibrated, want) {
		t.Errorf("calibration.uncalibrated %v; the snapshot's numbers give Posterior(%d, %d) = %v", pc.Uncalibrated, a, n-a, want)
	}
	reportMismatches(t, "five say 42, one outcome", raw, rig.check(c, resp), map[string]int{})
}

// TestRecompute_adaptiveReplicas: the first session answers no number, the
// others 42. Adaptive launches two runs, then one more when a run left no
// vote: the receipt's replicas are the three runs launched, in both
// snapshots.
func TestRecompute_adaptiveReplicas(t *testing.T) {
	behs := fiveSaying("red", 42)
	behs[0].num = "n/a"
	rig := newRecomputeRig(t, behs, true, nil)
	c := recomputeRequest("delegation", "adaptive", true, false)
	raw, resp := rig.mustPost(c)
	_, ps, cs := parseReceipt(t, resp)
	if n := ps.Consensus.Replicas; n != 3 || cs.Replicas != n || resp.Evidence.Launched != n {
		t.Errorf("policy_snapshot replicas %d, consensus_snapshot replicas %d, launched %d; want 3", n, cs.Replicas, resp.Evidence.Launched)
	}
	reportMismatches(t, "one without a number", raw, rig.check(c, resp), map[string]int{})
}
