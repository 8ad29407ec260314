package trust_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/trust"
)

// TestNumbers_loneOpenAnswer: an open delegation where one run answers
// and every other fails states, at every tier, the plurality's posterior
// of its one answer that its evidence records, as fast does
// (docs/INTERFACE.md, 9.3): the number is recomputable from the
// response whichever tier counted the runs.
func TestNumbers_loneOpenAnswer(t *testing.T) {
	p := panel{"lone", []voter{yes(18), {fail: errWorker}, {fail: errWorker}, {fail: errWorker}, {fail: errWorker}}}
	for _, policy := range []trust.Policy{trust.PolicyFast, trust.PolicySafe, trust.PolicyOracle, trust.PolicyAdaptive} {
		t.Run(string(policy), func(t *testing.T) {
			s := numbersService(t, p, true)
			resp, err := s.Call(context.Background(), numbersRequest(trust.ModeDelegation, policy, false))
			if err != nil {
				t.Fatal(err)
			}
			checkNumbers(t, resp, true)
			ev := resp.Evidence
			if ev.Answered != 1 {
				t.Fatalf("%d answers, want one", ev.Answered)
			}
			c, pl := ev.Calibration, ev.Plurality
			if c == nil || pl == nil {
				t.Fatalf("calibration %+v, plurality %+v; want both", c, pl)
			}
			ppa := consensus.PluralityPosteriorAt(pl.Groups, 0, pl.Coincidence, pl.Reliability)
			if d := cmp.Diff([]float64{ppa, ppa}, []float64{c.Conservative, resp.Confidence}, exact); d != "" {
				t.Errorf("groups %v: conservative, confidence (-want +got):\n%s", pl.Groups, d)
			}
		})
	}
}
