package trust_test

// Shapes of response that the recomputation must read as the documents
// say: an arbitration that accepts a RETRY winner (9.3).

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/vouchkit/vouch/consensus"
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
