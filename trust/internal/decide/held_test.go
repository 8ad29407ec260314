package decide

import (
	"testing"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/reputation"
)

// TestRules_Decide_heldBelowTheMap: a pair among scattered open answers
// whose count lies below every point of its map states the plurality's
// posterior, at most the lowest point's rate (basis "held"), not its
// count shifted by that point's error, which would read it under the
// floor; the stop reads a count on the same rule. A validation on the same map keeps
// the map's reading.
func TestRules_Decide_heldBelowTheMap(t *testing.T) {
	// Ten answered calls of two runs that agreed (count 7/8 = 0.875),
	// eight right.
	cal := &reputation.Calibration{Tier: "adaptive"}
	b := reputation.Bin(0.875)
	cal.Outcomes[b] = reputation.Record{Right: 8, Wrong: 2}
	cal.Scores[b] = reputation.Record{Right: 10 * 0.875, Wrong: 10 * 0.125}
	cal.Conservative[b] = reputation.Record{Right: 10 * 0.95, Wrong: 10 * 0.05}
	point := cal.Points()[0]
	maps := &Maps{Calibrations: []*reputation.Calibration{cal}, Open: true, Coincide: 0.05}

	rules := calibratedRules()
	rel := []float64{0.8, 0.8, 0.8, 0.8, 0.8}
	got, err := rules.Decide(maps, Tally{Runs: runsOf(rel, "16", "16", "13", "21", "14")})
	if err != nil {
		t.Fatal(err)
	}
	x := consensus.Posterior(2, 3)
	posterior := consensus.PluralityPosteriorAt([]int{2, 1, 1, 1}, 0, 0.05, 0.8)
	want := min(posterior, point.Rate)
	if shifted := x + point.Rate - point.Score; shifted > rules.Floor {
		t.Fatalf("the fixture's shifted count %v is above the floor: it tests nothing", shifted)
	}
	if got.Basis == nil || got.Basis.Basis != reputation.BasisHeld || got.Confidence != want || got.Basis.Read() != want {
		t.Fatalf("stated %v on %+v; want %v held (the posterior %v, the point's rate %v)", got.Confidence, got.Basis, want, posterior, point.Rate)
	}
	if !got.Accepted {
		t.Errorf("a pair stating %v above the floor %v was not accepted", got.Confidence, rules.Floor)
	}
	// The stop reads a delegation's count (its conservative number) on
	// the same rule: held, not shifted.
	if y := rules.Stop(cal).Calibrate(0.99, x); y != min(x, point.Rate) {
		t.Errorf("the stop reads the count %v as %v, want it held: %v", x, y, min(x, point.Rate))
	}

	validation := rules
	validation.Delegation = false
	if y, b := validation.read(cal, x, posterior); b.Basis != reputation.BasisOutcomes || y != reputation.Interpolate(b.Points, x) {
		t.Errorf("a validation reads %v on %+v, want the map's reading of its score", y, b)
	}
}
