package reputation_test

import (
	"math"
	"testing"

	"github.com/vouchkit/vouch/reputation"
)

// TestCalibration_HeldBasis: below the map's lowest point a held reading
// states the call's conservative number, at most that point's rate, and
// elsewhere reads as Basis does; Basis.Read recomputes each from the
// basis alone.
func TestCalibration_HeldBasis(t *testing.T) {
	// One point: 10 outcomes at score 0.7 (conservative 0.9), 6 right:
	// (6 + 4·0.9)/14.
	var c reputation.Calibration
	reportAt(&c, 0.7, 0.9, 10, 6)
	rate := (6 + 4*0.9) / 14
	tests := []struct {
		name      string
		x, cons   float64
		want      float64
		wantBasis string
	}{
		{"below, the conservative number under the point's rate", 0.34, 0.6, 0.6, reputation.BasisHeld},
		{"below, held at the point's rate", 0.34, 0.95, rate, reputation.BasisHeld},
		{"at the point, read on the map", 0.7, 0.6, rate, reputation.BasisOutcomes},
		{"above, shifted as Basis shifts it", 0.8, 0.2, 0.8 + rate - 0.7, reputation.BasisOutcomes},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			y, b := c.HeldBasis(tt.x, tt.cons)
			if math.Abs(y-tt.want) > 1e-12 || b.Basis != tt.wantBasis {
				t.Errorf("HeldBasis(%v, %v) = %v, basis %q; want %v, %q", tt.x, tt.cons, y, b.Basis, tt.want, tt.wantBasis)
			}
			if got := b.Read(); got != y {
				t.Errorf("Read() = %v, HeldBasis stated %v", got, y)
			}
			if len(b.Points) != 1 || b.Uncalibrated != tt.x || b.Conservative != tt.cons {
				t.Errorf("basis %+v: want the one point, the score and the conservative number", b)
			}
			if plain, _ := c.Basis(tt.x, tt.cons); tt.wantBasis == reputation.BasisOutcomes && plain != y {
				t.Errorf("Basis(%v, %v) = %v, HeldBasis %v: want the same off the held range", tt.x, tt.cons, plain, y)
			}
		})
	}
	var empty reputation.Calibration
	if y, b := empty.HeldBasis(0.34, 0.8); y != 0.8 || b.Basis != reputation.BasisUncalibrated {
		t.Errorf("no outcome: HeldBasis = %v, %q; want the conservative number, uncalibrated", y, b.Basis)
	}
}
