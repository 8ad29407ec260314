package consensus_test

import (
	"math"
	"testing"

	"github.com/vouchkit/vouch/consensus"
)

// fuzzGroups decodes the sizes of up to eight groups: mostly 0 to 9, else
// a size no panel gives but a caller might pass (negative, or so large
// that the sizes overflow when summed).
func fuzzGroups(data []byte) []int {
	if len(data) > 8 {
		data = data[:8]
	}
	groups := make([]int, len(data))
	for i, b := range data {
		if b < 0xf8 {
			groups[i] = int(b % 10)
			continue
		}
		groups[i] = []int{-1, math.MinInt, 1 << 20, 1 << 40, math.MaxInt / 2, math.MaxInt, 1e6, 100}[b-0xf8]
	}
	return groups
}

// FuzzPluralityPosterior checks PluralityPosterior, PluralityPosteriorAt
// and PluralityPosteriorsAt on any group sizes, winner, coincidence and
// reliability: every result is a probability; a winner out of range, a
// group of no answer or sizes whose sum overflows give 0; PluralityPosteriorsAt gives each group's
// PluralityPosteriorAt, bit for bit, summing to at most 1; groups of one
// size are alike (to rounding); a NaN coincidence reads DefaultCoincidence and a NaN
// reliability DefaultReliability.
func FuzzPluralityPosterior(f *testing.F) {
	f.Add([]byte{2, 1, 1, 1}, 0, 0.1, 0.8)
	f.Add([]byte{2, 2, 1}, 1, 0.0, 1.0)
	f.Add([]byte{1}, 0, 1.0, 0.0)
	f.Add([]byte{3, 0, 1}, 0, math.NaN(), math.NaN())
	f.Add([]byte{0xfd, 0xfd, 1}, 2, 0.5, 0.5)
	f.Add([]byte{0xfa, 0xfb, 0xfc}, 0, math.Inf(1), math.Inf(-1))
	f.Add([]byte{0xff, 1}, 1, -1.0, 2.0)
	f.Fuzz(func(t *testing.T, data []byte, winner int, coincide, reliability float64) {
		groups := fuzzGroups(data)
		bad, n := false, 0 // a group of no answer, or sizes whose sum overflows
		for _, k := range groups {
			bad = bad || k <= 0 || k > math.MaxInt-n
			n += k
		}
		probability := func(name string, i int, p float64) {
			t.Helper()
			if !(p >= 0 && p <= 1) {
				t.Fatalf("%s(%v, %d, %v, %v) = %v, not a probability", name, groups, i, coincide, reliability, p)
			}
			if (bad || i < 0 || i >= len(groups)) && p != 0 {
				t.Fatalf("%s(%v, %d, %v, %v) = %v, want 0", name, groups, i, coincide, reliability, p)
			}
		}
		p := consensus.PluralityPosterior(groups, winner, coincide)
		probability("PluralityPosterior", winner, p)
		at := consensus.PluralityPosteriorAt(groups, winner, coincide, reliability)
		probability("PluralityPosteriorAt", winner, at)
		if math.IsNaN(coincide) {
			if d := consensus.PluralityPosterior(groups, winner, consensus.DefaultCoincidence); d != p {
				t.Fatalf("PluralityPosterior at NaN %v, at DefaultCoincidence %v", p, d)
			}
		}
		if math.IsNaN(reliability) {
			if d := consensus.PluralityPosteriorAt(groups, winner, coincide, consensus.DefaultReliability); d != at {
				t.Fatalf("PluralityPosteriorAt at NaN %v, at DefaultReliability %v", at, d)
			}
		}
		all := consensus.PluralityPosteriorsAt([]float64{-1}, groups, coincide, reliability)
		if len(all) != 1+len(groups) || all[0] != -1 {
			t.Fatalf("PluralityPosteriorsAt appended %v to [-1] for %d groups", all, len(groups))
		}
		all = all[1:]
		var sum float64
		for i, q := range all {
			probability("PluralityPosteriorsAt", i, q)
			if one := consensus.PluralityPosteriorAt(groups, i, coincide, reliability); one != q {
				t.Fatalf("PluralityPosteriorsAt(%v, %v, %v)[%d] = %v, PluralityPosteriorAt %v", groups, coincide, reliability, i, q, one)
			}
			for j := range i {
				if groups[j] == groups[i] && math.Abs(all[j]-q) > 1e-15 { // summed in another order
					t.Fatalf("groups %d and %d of size %d: %v and %v", j, i, groups[i], all[j], q)
				}
			}
			sum += q
		}
		if sum > 1+1e-12 {
			t.Fatalf("PluralityPosteriorsAt(%v, %v, %v) = %v, summing to %v", groups, coincide, reliability, all, sum)
		}
	})
}
