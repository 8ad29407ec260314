package decide

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
)

func randomMap(r *rand.Rand, tier string) *reputation.Calibration {
	c := &reputation.Calibration{Tier: tier}
	if r.IntN(4) == 0 {
		return c // no outcome
	}
	for range 1 + r.IntN(6) {
		x := r.Float64()
		b := reputation.Bin(x)
		n := 1 + float64(r.IntN(10))
		right := math.Floor(n * r.Float64())
		c.Outcomes[b].Right += right
		c.Outcomes[b].Wrong += n - right
		c.Scores[b].Right += n * x
		c.Scores[b].Wrong += n * (1 - x)
		cc := x * r.Float64()
		c.Conservative[b].Right += n * cc
		c.Conservative[b].Wrong += n * (1 - cc)
	}
	return c
}

func randomRuns(r *rand.Rand, delegation bool) []router.Run {
	n := 1 + r.IntN(5)
	runs := make([]router.Run, n)
	for i := range runs {
		rel := 0.5 + r.Float64()/2
		runs[i] = router.Run{Replica: i, SessionID: router.SessionID(i + 1), Reliability: &rel}
		switch {
		case r.IntN(8) == 0:
			runs[i].Label = router.LabelError
		case delegation:
			runs[i].Label = router.LabelOK
			runs[i].Output = json.RawMessage(fmt.Sprint(r.IntN(3)))
		default:
			runs[i].Label = router.Label([]router.Verdict{router.VerdictValid, router.VerdictInvalid}[r.IntN(2)])
		}
	}
	return runs
}

// Every calibrated confidence Decide states is what its basis recomputes
// (reputation.Basis.Read), and a plurality's conservative number is
// PluralityPosteriorAt of the groups, coincidence and reliability the
// decision records; every confidence lies in [0, 1].
func TestDecide_recomputable(t *testing.T) {
	r := rand.New(rand.NewPCG(51, 52))
	for i := range 20000 {
		delegation := r.IntN(2) == 0
		rules := Rules{Tier: []Tier{Safe, Adaptive, Fast}[r.IntN(3)], Delegation: delegation, Calibrated: true, Threshold: 0.97, Floor: 0.5}
		var m *Maps
		if r.IntN(5) > 0 {
			if delegation {
				m = &Maps{Calibrations: []*reputation.Calibration{randomMap(r, rules.CalibrationTier(""))}, Open: r.IntN(2) == 0, Coincide: r.Float64() * 0.5}
			} else {
				m = &Maps{Labels: []consensus.Label{consensus.LabelValid, consensus.LabelInvalid},
					Calibrations: []*reputation.Calibration{randomMap(r, rules.CalibrationTier("VALID")), randomMap(r, rules.CalibrationTier("INVALID"))}}
			}
		}
		runs := randomRuns(r, delegation)
		d, err := rules.Decide(m, Tally{Runs: runs})
		if err != nil {
			t.Fatal(err)
		}
		if !(d.Confidence >= 0 && d.Confidence <= 1) {
			t.Fatalf("#%d confidence %v", i, d.Confidence)
		}
		if d.Basis == nil {
			continue
		}
		if got := d.Basis.Read(); got != d.Confidence {
			t.Errorf("#%d: stated %v, basis recomputes %v (basis %+v)", i, d.Confidence, got, *d.Basis)
		}
		if d.Groups != nil {
			pp := consensus.PluralityPosteriorAt(d.Groups, 0, d.Coincidence, d.Reliability)
			want := pp
			if !d.Recounted {
				want = math.Min(d.Out.Confidence, pp)
			}
			if d.Basis.Conservative != want {
				t.Errorf("#%d: conservative %v, recomputed %v (groups %v)", i, d.Basis.Conservative, want, d.Groups)
			}
			if d.Recounted {
				a := d.Out.Agreeing
				if x := consensus.Posterior(a, d.Out.Answered-a); d.Basis.Uncalibrated != x {
					t.Errorf("#%d: uncalibrated %v, Posterior(%d, %d) = %v", i, d.Basis.Uncalibrated, a, d.Out.Answered-a, x)
				}
			}
		}
	}
}

// Permuting the runs changes no stated confidence nor verdict when no
// tie is broken by order.
func TestDecide_orderOfRuns(t *testing.T) {
	r := rand.New(rand.NewPCG(61, 62))
	n := 0
	for i := range 20000 {
		delegation := r.IntN(2) == 0
		rules := Rules{Tier: []Tier{Safe, Adaptive}[r.IntN(2)], Delegation: delegation, Calibrated: true, Threshold: 0.97, Floor: 0.5}
		runs := randomRuns(r, delegation)
		d, err := rules.Decide(nil, Tally{Runs: runs})
		if err != nil {
			t.Fatal(err)
		}
		perm := make([]router.Run, len(runs))
		for k, j := range r.Perm(len(runs)) {
			perm[k] = runs[j]
		}
		e, err := rules.Decide(nil, Tally{Runs: perm})
		if err != nil {
			t.Fatal(err)
		}
		// skip ties: equal group sizes or equal weights
		if d.Out.Agreeing == d.Out.Against || e.Out.Label != d.Out.Label {
			continue
		}
		if math.Abs(d.Confidence-e.Confidence) > 1e-12 || d.Accepted != e.Accepted {
			n++
			if n < 4 {
				t.Errorf("#%d: order changed the decision: %v %v (%v) vs %v %v (%v)", i, d.Confidence, d.Accepted, d.Out.Answer, e.Confidence, e.Accepted, e.Out.Answer)
			}
		}
	}
}
