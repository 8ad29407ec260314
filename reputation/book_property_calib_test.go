package reputation_test

import (
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vouchkit/vouch/reputation"
)

// Ledger.Report counts each reported outcome in the map of the call's
// operation and tier: the bin floor(x·20) (the top bin holding 1) of its
// score x clamped to [0, 1], the score and conservative number summed as
// Right and their complements as Wrong; a NaN score counts in no map, a
// NaN conservative number as the score.
func TestBookProperty_CalibrationCounts(t *testing.T) {
	r := rand.New(rand.NewPCG(39, 40))
	for range 100 {
		b, _ := reputation.New(nil, reputation.Options{Horizon: 1e9})
		l := reputation.NewLedger(1000)
		type mk struct{ op, tier string }
		want := map[mk]*reputation.Calibration{}
		for i := range r.IntN(50) {
			sc := propertyScopes[r.IntN(len(propertyScopes))]
			tier := []string{"t", "u"}[r.IntN(2)]
			x := r.Float64()*1.4 - 0.2
			c := r.Float64()
			switch r.IntN(10) {
			case 0:
				x = math.NaN()
			case 1:
				c = math.NaN()
			case 2:
				x = 1
			case 3:
				x = 0.05 * float64(r.IntN(21))
			}
			id := fmt.Sprint(i)
			l.PutCall("c", id, reputation.Call{Scope: sc, Ballots: randomBallots(r, []int64{1, 2}), Tier: tier, Score: x, Conservative: c})
			right := r.IntN(2) == 0
			if _, err := l.Report(propertyCtx, b, "c", id, right); err != nil {
				t.Fatal(err)
			}
			if math.IsNaN(x) {
				continue
			}
			x = math.Min(math.Max(x, 0), 1)
			if math.IsNaN(c) {
				c = x
			}
			k := mk{reservedOp(sc), tier}
			m := want[k]
			if m == nil {
				m = &reputation.Calibration{}
				want[k] = m
			}
			bin := int(math.Floor(x * 20))
			if bin == 20 {
				bin = 19
			}
			if right {
				m.Outcomes[bin].Right++
			} else {
				m.Outcomes[bin].Wrong++
			}
			m.Scores[bin].Right += x
			m.Scores[bin].Wrong += 1 - x
			m.Conservative[bin].Right += c
			m.Conservative[bin].Wrong += 1 - c
		}
		for _, sc := range propertyScopes {
			for _, tier := range []string{"t", "u"} {
				got, err := b.Calibration(propertyCtx, sc, tier)
				if err != nil {
					t.Fatal(err)
				}
				w := want[mk{reservedOp(sc), tier}]
				if w == nil {
					w = &reputation.Calibration{}
				}
				for i := range 20 {
					for _, p := range [][2]reputation.Record{{got.Outcomes[i], w.Outcomes[i]}, {got.Scores[i], w.Scores[i]}, {got.Conservative[i], w.Conservative[i]}} {
						if !near(p[0].Right, p[1].Right, 1e-9) || !near(p[0].Wrong, p[1].Wrong, 1e-9) {
							t.Fatalf("%+v %s bin %d: %+v, doc %+v", sc, tier, i, p[0], p[1])
						}
					}
				}
			}
		}
	}
}
