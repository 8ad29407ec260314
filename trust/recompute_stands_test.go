package trust_test

// Adaptive's weighted tally of an open answer stands only when its own
// calibrated number reaches trust.DefaultWeightedStopThreshold (9.2),
// read as the number the call states: below the map's lowest point, held
// at the conservative number.

import (
	"context"
	"errors"
	"testing"

	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// TestRecompute_weightedStandsOnlyAtThreshold: five sessions answer red,
// with records lowered by two wrong outcomes, so that two agreeing runs
// weigh less than the count of two. Each adaptive delegation's outcome is
// reported right, so the adaptive map's lowest point sits at the count's
// Posterior(2, 0) with a rate near 1. A weighted tally whose conservative
// number lies below that point states it held (at most the point's rate,
// reputation.Calibration.HeldBasis), below 0.97: it must not stand, and
// the count decides, read on the map. Every call whose pooled snapshot is
// "weighted" states at least DefaultWeightedStopThreshold.
func TestRecompute_weightedStandsOnlyAtThreshold(t *testing.T) {
	ctx := context.Background()
	book, err := reputation.New(nil, reputation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var ballots []reputation.Ballot
	for id := range int64(5) {
		ballots = append(ballots, reputation.Ballot{Session: id + 1, Backed: true})
	}
	for range 2 {
		if err := book.Feedback(ctx, router.Scope(router.KindDelegate, "qa"), ballots, false); err != nil {
			t.Fatal(err)
		}
	}
	rig := newRecomputeRig(t, fiveSaying("red", 42), true, []router.EngineOption{router.WithReputation(book)})
	stood, counted := 0, 0
	for i := range 12 {
		c := recomputeRequest("delegation", "adaptive", false, false)
		raw, resp := rig.mustPost(c)
		cs, b := snapshotOf(resp), resp.Evidence.Calibration
		if cs == nil || b == nil {
			t.Fatalf("call %d: consensus snapshot %v, calibration %v", i, cs, b)
		}
		switch {
		case cs.Strategy == "weighted":
			stood++
			if resp.Confidence < trust.DefaultWeightedStopThreshold {
				t.Errorf("call %d: the weighted tally stood at confidence %v, below %v; basis %+v", i, resp.Confidence, trust.DefaultWeightedStopThreshold, *b)
			}
		case b.Basis != reputation.BasisUncalibrated:
			counted++
		}
		reportMismatches(t, "five say red", raw, rig.check(c, resp), map[string]int{})
		if err := rig.svc.Feedback(trust.WithCaller(ctx, "alice"), resp.TraceID, true); err != nil && !errors.Is(err, trust.ErrExam) {
			t.Fatal(err)
		}
	}
	if stood == 0 || counted == 0 {
		t.Errorf("%d calls stood on the weighted tally and %d were counted on a map of outcomes; want both", stood, counted)
	}
}
