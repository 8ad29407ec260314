package reputation_test

import (
	"math/rand/v2"
	"testing"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/reputation"
)

// Book.Evidence's confidence slope follows the package doc on reported
// outcomes: x the log-odds of each ballot's confidence, y 0 or 1 with
// FeedbackWeight votes' worth, per session and operation,
// β = Cov(x, y) / (Var(x)·ȳ(1−ȳ)) · n/(n+SlopePrior), clamped to
// [0, MaxSlope], centre x̄.
func TestBookProperty_SlopeMatchesDoc(t *testing.T) {
	r := rand.New(rand.NewPCG(31, 32))
	checked := 0
	defer func() {
		if checked < 100 {
			t.Errorf("only %d non-zero slopes checked", checked)
		}
	}()
	for trial := range 300 {
		b, _ := reputation.New(nil, reputation.Options{Horizon: 1e9})
		type mom struct{ n, x, xx, y, xy float64 }
		moms := map[[2]any]*mom{}
		sessions := []int64{1, 2, 3}
		for range r.IntN(60) {
			sc := propertyScopes[r.IntN(len(propertyScopes))]
			bs := randomBallots(r, sessions)
			right := r.IntN(2) == 0
			for i := range bs {
				// Confidence going with being right, for session 1.
				if bs[i].Session == 1 && bs[i].Confidence > 0 {
					if bs[i].Backed == right {
						bs[i].Confidence = 0.6 + 0.39*r.Float64()
					} else {
						bs[i].Confidence = 0.5 + 0.3*r.Float64()
					}
				}
			}
			if err := b.Feedback(propertyCtx, sc, bs, right); err != nil {
				t.Fatal(err)
			}
			for _, bl := range bs {
				var y float64
				switch {
				case right && bl.Backed, !right && bl.Opposed:
					y = 1
				case right, bl.Backed:
					y = 0
				default:
					continue
				}
				if !(bl.Confidence > 0) {
					continue
				}
				k := [2]any{bl.Session, reservedOp(sc)}
				m := moms[k]
				if m == nil {
					m = new(mom)
					moms[k] = m
				}
				x, w := consensus.Logit(bl.Confidence), float64(reputation.DefaultFeedbackWeight)
				m.n += w
				m.x += w * x
				m.xx += w * x * x
				m.y += w * y
				m.xy += w * x * y
			}
		}
		for _, sc := range propertyScopes {
			rel, err := b.Reliabilities(propertyCtx, sc, sessions)
			if err != nil {
				t.Fatal(err)
			}
			for _, s := range sessions {
				got := rel.Confidence[s]
				m := moms[[2]any{s, reservedOp(sc)}]
				var want consensus.ConfidenceSlope
				if m != nil && m.n > 1 {
					mx, my := m.x/m.n, m.y/m.n
					varX := m.xx/m.n - mx*mx
					cov := m.xy/m.n - mx*my
					want.Center = mx
					if varX > 1e-6 && my > 0 && my < 1 {
						want.Slope = min(max(cov/(varX*my*(1-my))*m.n/(m.n+reputation.SlopePrior), 0), reputation.MaxSlope)
					}
				}
				if want.Slope == 0 {
					if got.Slope != 0 {
						t.Fatalf("trial %d: session %d in %+v: slope %+v, doc %+v", trial, s, sc, got, want)
					}
					continue
				}
				checked++
				if !near(got.Slope, want.Slope, 1e-6) || !near(got.Center, want.Center, 1e-6) {
					t.Fatalf("trial %d: session %d in %+v: slope %+v, doc %+v", trial, s, sc, got, want)
				}
			}
		}
	}
}
