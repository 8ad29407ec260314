package reputation_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/vouchkit/vouch/reputation"
)

// report adds n outcomes at score x to c, right of them right, of calls
// whose conservative number was x too.
func report(c *reputation.Calibration, x float64, n, right float64) {
	reportAt(c, x, x, n, right)
}

// reportAt adds n outcomes at score x and conservative number cons to c,
// right of them right.
func reportAt(c *reputation.Calibration, x, cons float64, n, right float64) {
	b := reputation.Bin(x)
	c.Outcomes[b].Right += right
	c.Outcomes[b].Wrong += n - right
	c.Scores[b].Right += n * x
	c.Scores[b].Wrong += n * (1 - x)
	c.Conservative[b].Right += n * cons
	c.Conservative[b].Wrong += n * (1 - cons)
}

// TestCalibration_Apply: the map of no outcome is the identity, a few
// outcomes move it little, many move it to the rate they show, and it
// stays monotone and in [0, 1].
func TestCalibration_Apply(t *testing.T) {
	tests := []struct {
		name    string
		fill    func(c *reputation.Calibration)
		x, want float64
		points  int
	}{
		{"empty", func(*reputation.Calibration) {}, 0.875, 0.875, 0},
		{"empty at 0", func(*reputation.Calibration) {}, 0, 0, 0},
		{"empty at 1", func(*reputation.Calibration) {}, 1, 1, 0},
		// One wrong outcome at 0.9, prior 4: (0 + 4·0.9)/5 = 0.72.
		{"sparse, at the point", func(c *reputation.Calibration) { report(c, 0.9, 1, 0) }, 0.9, 0.72, 1},
		// Beyond the one point: shifted by 0.72 - 0.9.
		{"sparse, beyond", func(c *reputation.Calibration) { report(c, 0.9, 1, 0) }, 0.95, 0.77, 1},
		{"sparse, below", func(c *reputation.Calibration) { report(c, 0.9, 1, 0) }, 0.5, 0.32, 1},
		// 400 outcomes at 0.9, 300 right: (300 + 3.6)/404.
		{"dense", func(c *reputation.Calibration) { report(c, 0.9, 400, 300) }, 0.9, 303.6 / 404, 1},
		// Two points, (0.7, (50+2.8)/104) and (0.9, (90+3.6)/104), read
		// on the line between them.
		{"dense, between", func(c *reputation.Calibration) {
			report(c, 0.7, 100, 50)
			report(c, 0.9, 100, 90)
		}, 0.8, (52.8/104 + 93.6/104) / 2, 2},
		// A violation: 0.7 right more often than 0.9; pooled to one rate
		// ((70+2.8) + (50+3.6)) / 208.
		{"pooled", func(c *reputation.Calibration) {
			report(c, 0.7, 100, 70)
			report(c, 0.9, 100, 50)
		}, 0.8, 126.4 / 208, 2},
		// Far above the top: clamped to 1.
		{"clamped", func(c *reputation.Calibration) { report(c, 0.6, 100, 100) }, 0.99, 1, 1},
		// The prior is centred on what the calls stated with no
		// outcome: one right outcome at score 0.95 of a call that
		// stated 0.75 reads (1 + 4·0.75)/5 = 0.8 there.
		{"centred on the conservative number", func(c *reputation.Calibration) { reportAt(c, 0.95, 0.75, 1, 1) }, 0.95, 0.8, 1},
		// Outcomes kept before the conservative numbers were: centred
		// on the scores.
		{"no conservative record", func(c *reputation.Calibration) {
			report(c, 0.95, 1, 1)
			c.Conservative = [reputation.CalibrationBins]reputation.Record{}
		}, 0.95, (1 + 4*0.95) / 5, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var c reputation.Calibration
			tt.fill(&c)
			got, pts := c.Apply(tt.x)
			if math.Abs(got-tt.want) > 1e-12 || len(pts) != tt.points {
				t.Errorf("Apply(%v) = %v on %d points %+v, want %v on %d", tt.x, got, len(pts), pts, tt.want, tt.points)
			}
			if again := reputation.Interpolate(pts, tt.x); again != got {
				t.Errorf("Interpolate(%+v, %v) = %v, Apply said %v", pts, tt.x, again, got)
			}
		})
	}
}

// TestCalibration_monotone: whatever the outcomes, the map is
// non-decreasing, maps [0, 1] into [0, 1], and its points' rates never
// fall as their scores rise.
func TestCalibration_monotone(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for trial := range 200 {
		var c reputation.Calibration
		for range r.IntN(60) {
			x := r.Float64()
			report(&c, x, 1, float64(r.IntN(2)))
		}
		pts := c.Points()
		for i := 1; i < len(pts); i++ {
			if pts[i].Score <= pts[i-1].Score || pts[i].Rate < pts[i-1].Rate {
				t.Fatalf("trial %d: points %+v are not increasing in score and non-decreasing in rate", trial, pts)
			}
		}
		prev := -1.0
		for i := range 1001 {
			x := float64(i) / 1000
			y, _ := c.Apply(x)
			if y < prev || y < 0 || y > 1 {
				t.Fatalf("trial %d: Apply(%v) = %v after %v: not monotone in [0, 1]", trial, x, y, prev)
			}
			prev = y
		}
	}
}

// TestBook_calibrationWithoutOutcomes: a property: with no outcome
// reported, the calibrated number is the conservative number, whatever
// the score and the learning from agreement, so never above it.
func TestBook_calibrationWithoutOutcomes(t *testing.T) {
	b := newBook(t, nil)
	simulate(t, b, rand.New(rand.NewPCG(3, 4)), []float64{0.1, 0.2, 0.3}, 50, 3, false)
	r := rand.New(rand.NewPCG(5, 6))
	for range 500 {
		x := r.Float64()
		c := x * r.Float64()
		y, basis, err := b.Calibrate(context.Background(), scope, "safe", x, c)
		if err != nil {
			t.Fatal(err)
		}
		if y != c || basis.Basis != reputation.BasisUncalibrated || len(basis.Points) != 0 || basis.Outcomes != 0 ||
			basis.Uncalibrated != x || basis.Conservative != c || basis.Read() != c {
			t.Fatalf("Calibrate(%v, %v) with no outcome = %v, %+v; want %v uncalibrated", x, c, y, basis, c)
		}
	}
}

// TestLedger_ReportCalibrates: outcomes reported on calls of one tier
// calibrate that tier's map in the call's operation, and no other; a
// report repeated counts once, and one that says the opposite moves its
// outcome.
func TestLedger_ReportCalibrates(t *testing.T) {
	ctx := context.Background()
	b := newBook(t, nil)
	l := reputation.NewLedger(100)
	ballots := []reputation.Ballot{{Session: 1, Backed: true}, {Session: 2, Backed: true}}
	for i := range 40 {
		id := fmt.Sprint(i)
		l.PutCall("alice", id, reputation.Call{Scope: scope, Ballots: ballots, Tier: "safe", Score: 0.9375, Conservative: 0.875})
		for range 2 { // the second report adds nothing
			if ok, err := l.Report(ctx, b, "alice", id, i%2 == 0); !ok || err != nil {
				t.Fatalf("Report(%s) = %t, %v", id, ok, err)
			}
		}
	}
	check := func(right float64) {
		t.Helper()
		y, basis, err := b.Calibrate(ctx, scope, "safe", 0.9375, 0.875)
		if err != nil {
			t.Fatal(err)
		}
		want := reputation.Basis{Tier: "safe", Basis: reputation.BasisOutcomes, Outcomes: 40, Uncalibrated: 0.9375, Conservative: 0.875,
			Points: []reputation.Point{{Score: 0.9375, Rate: (right + 4*0.875) / 44, Outcomes: 40}}}
		if diff := cmp.Diff(want, basis, cmpopts.EquateApprox(0, 1e-12)); diff != "" || math.Abs(y-want.Points[0].Rate) > 1e-12 || basis.Read() != y {
			t.Errorf("after 40 outcomes, %v right: %v, basis (-want +got):\n%s", right, y, diff)
		}
	}
	check(20)
	if ok, err := l.Report(ctx, b, "alice", "1", true); !ok || err != nil { // was wrong
		t.Fatal(ok, err)
	}
	check(21)
	for _, other := range []struct {
		scope reputation.Scope
		tier  string
	}{{scope, "adaptive"}, {reputation.Scope{Operation: "delegate"}, "safe"}} {
		if y, basis, _ := b.Calibrate(ctx, other.scope, other.tier, 0.9375, 0.875); y != 0.875 || basis.Basis != reputation.BasisUncalibrated {
			t.Errorf("%+v, tier %s: %v, %+v; want it uncalibrated", other.scope, other.tier, y, basis)
		}
	}
	// The sessions learned as Feedback teaches them.
	rel := reliabilities(t, b, 1)
	if rel.Sessions[1] == reputation.DefaultPrior().Mean() {
		t.Error("the reports taught the sessions nothing")
	}
}

// BenchmarkBook_Calibrate measures what calibration adds to a call: one
// read of a map holding outcomes in every bin, and the calibrated number.
func BenchmarkBook_Calibrate(b *testing.B) {
	ctx := context.Background()
	book, err := reputation.New(nil, reputation.Options{})
	if err != nil {
		b.Fatal(err)
	}
	l := reputation.NewLedger(1000)
	for i := range 400 {
		id := fmt.Sprint(i)
		x := float64(i%100) / 100
		l.PutCall("host", id, reputation.Call{Scope: scope, Tier: "safe", Score: x, Conservative: x * 0.9})
		if _, err := l.Report(ctx, book, "host", id, i%3 != 0); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportAllocs()
	for b.Loop() {
		if _, _, err := book.Calibrate(ctx, scope, "safe", 0.9, 0.8); err != nil {
			b.Fatal(err)
		}
	}
}

// TestBook_Calibrations: maps read together are the maps read one by one,
// in the order asked, each holding its own outcomes only.
func TestBook_Calibrations(t *testing.T) {
	ctx := context.Background()
	b := newBook(t, nil)
	l := reputation.NewLedger(100)
	for i, tier := range []string{"fast/VALID", "fast/VALID", "fast/INVALID"} {
		id := fmt.Sprint(i)
		l.PutCall("alice", id, reputation.Call{Scope: scope, Tier: tier, Score: 0.9, Conservative: 0.75})
		if ok, err := l.Report(ctx, b, "alice", id, i == 0); !ok || err != nil {
			t.Fatalf("Report(%s) = %t, %v", id, ok, err)
		}
	}
	tiers := []string{"fast/INVALID", "safe/VALID", "fast/VALID"}
	got, err := b.Calibrations(ctx, scope, tiers...)
	if err != nil {
		t.Fatal(err)
	}
	for i, tier := range tiers {
		one, err := b.Calibration(ctx, scope, tier)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(one, got[i]); diff != "" {
			t.Errorf("map %d (%s) read together (-alone +together):\n%s", i, tier, diff)
		}
	}
	if n := []float64{got[0].Total(), got[1].Total(), got[2].Total()}; n[0] != 1 || n[1] != 0 || n[2] != 2 {
		t.Errorf("outcomes %v, want [1 0 2]", n)
	}
}
