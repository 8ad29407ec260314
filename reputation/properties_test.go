package reputation_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vouchkit/vouch/reputation"
)

func randomMap(r *rand.Rand) *reputation.Calibration {
	c := &reputation.Calibration{Tier: "t"}
	for range 1 + r.IntN(8) {
		x := r.Float64()
		if r.IntN(5) == 0 {
			x = []float64{0, 1, 0.05, 0.95}[r.IntN(4)]
		}
		b := reputation.Bin(x)
		n := 1 + float64(r.IntN(10))
		right := math.Floor(n * r.Float64())
		c.Outcomes[b].Right += right
		c.Outcomes[b].Wrong += n - right
		c.Scores[b].Right += n * x
		c.Scores[b].Wrong += n * (1 - x)
		cc := r.Float64()
		c.Conservative[b].Right += n * cc
		c.Conservative[b].Wrong += n * (1 - cc)
	}
	return c
}

// The map is non-decreasing in the score, maps into [0, 1], its points'
// rates rise, and each reading is what its basis recomputes.
func TestCalibration_properties(t *testing.T) {
	r := rand.New(rand.NewPCG(81, 82))
	for range 5000 {
		m := randomMap(r)
		pts := m.Points()
		for i := 1; i < len(pts); i++ {
			if pts[i].Rate < pts[i-1].Rate || pts[i].Score < pts[i-1].Score {
				t.Fatalf("points not monotone: %+v", pts)
			}
		}
		c := r.Float64()
		prev, prevH := math.Inf(-1), math.Inf(-1)
		for k := -2; k <= 102; k++ {
			x := float64(k) / 100
			y, b := m.Basis(x, c)
			h, hb := m.HeldBasis(x, c)
			if !(y >= 0 && y <= 1) || !(h >= 0 && h <= 1) {
				t.Fatalf("reading %v / %v out of [0,1]", y, h)
			}
			if y < prev-1e-15 {
				t.Fatalf("Basis not monotone at %v: %v < %v", x, y, prev)
			}
			if h < prevH-1e-15 {
				t.Fatalf("HeldBasis not monotone at %v: %v < %v (c=%v, pts %+v)", x, h, prevH, c, pts)
			}
			prev, prevH = y, h
			if b.Read() != y || hb.Read() != h {
				t.Fatalf("basis recomputes %v/%v, stated %v/%v", b.Read(), hb.Read(), y, h)
			}
			if rd := m.Read(x, c); rd != y {
				t.Fatalf("Read %v != Basis %v", rd, y)
			}
			if len(b.Points) > 0 && reputation.Interpolate(b.Points, x) != y {
				t.Fatalf("Interpolate on the basis points differs")
			}
		}
	}
}

// A NaN score on a map of one point reads as Interpolate reads it: no
// panic (it failed both comparisons with the map's ends).
func TestCalibration_readNaN(t *testing.T) {
	m := &reputation.Calibration{Tier: "t"}
	m.Outcomes[10] = reputation.Record{Right: 3, Wrong: 1}
	m.Scores[10] = reputation.Record{Right: 4 * 0.52, Wrong: 4 * 0.48}
	defer func() {
		if p := recover(); p != nil {
			t.Errorf("Calibration.Read(NaN, 0.5) panicked: %v", p)
		}
	}()
	y, basis := m.Basis(math.NaN(), 0.5)
	if want := basis.Read(); y != want || m.Read(math.NaN(), 0.5) != y || math.IsNaN(y) {
		t.Errorf("Read(NaN) = %v, its basis reads %v", y, want)
	}
}

// A record of more wins than an int holds saturates rather than wraps:
// Beats never falls, and PValue never rises, with more wins.
func TestLead_hugeCounts(t *testing.T) {
	small := reputation.Lead{Won: 100}
	huge := reputation.Lead{Won: 1e19}
	if huge.Beats() < small.Beats() {
		t.Errorf("Beats of %v wins %v < Beats of %v wins %v", huge.Won, huge.Beats(), small.Won, small.Beats())
	}
	if huge.PValue() > small.PValue() {
		t.Errorf("PValue of %v wins %v > PValue of %v wins %v", huge.Won, huge.PValue(), small.Won, small.PValue())
	}
	if inf := (reputation.Lead{Won: math.Inf(1)}); inf.Beats() < huge.Beats() || inf.PValue() > huge.PValue() {
		t.Errorf("infinite wins: Beats %v, PValue %v; %v wins: %v, %v", inf.Beats(), inf.PValue(), huge.Won, huge.Beats(), huge.PValue())
	}
}
