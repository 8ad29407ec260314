package consensus_test

import (
	"math"
	"testing"

	"github.com/vouchkit/vouch/consensus"
)

func TestPluralityPosterior(t *testing.T) {
	for _, c := range []struct {
		name     string
		groups   []int
		winner   int
		coincide float64
		want     float64
	}{
		{"two agree", []int{2}, 0, 0.1, 1 / 1.1},
		{"one answer", []int{1}, 0, 0.1, 0.5},
		{"a pair among three single answers", []int{2, 1, 1, 1}, 0, 0.05, 1 / (1 + 16*0.05)},
		{"the same at 0.1", []int{2, 1, 1, 1}, 0, 0.1, 1 / (1 + 16*0.1)},
		{"one of two single answers", []int{1, 1}, 1, 0.1, 0.25},
		{"wrong answers never coincide: a pair is right", []int{2, 1, 1}, 0, 0, 1},
		{"winner out of range", []int{2, 1}, 2, 0.1, 0},
		{"an empty group", []int{2, 0}, 0, 0.1, 0},
	} {
		if got := consensus.PluralityPosterior(c.groups, c.winner, c.coincide); math.Abs(got-c.want) > 1e-12 {
			t.Errorf("%s: PluralityPosterior(%v, %d, %v) = %v, want %v", c.name, c.groups, c.winner, c.coincide, got, c.want)
		}
	}
	// Where answers always coincide, groups are votes: a majority of 3
	// of 5 is right as often as Posterior says it is the majority view,
	// and two pairs are alike.
	if a, b := consensus.PluralityPosterior([]int{2, 2, 1}, 0, 0.1), consensus.PluralityPosterior([]int{2, 2, 1}, 1, 0.1); a != b || a >= 0.5 {
		t.Errorf("two pairs: %v and %v, want equal and below 1/2", a, b)
	}
	// More agreement, surer; more coincidence, less sure.
	if consensus.PluralityPosterior([]int{3, 1, 1}, 0, 0.1) <= consensus.PluralityPosterior([]int{2, 1, 1, 1}, 0, 0.1) {
		t.Error("3 of 5 no surer than 2 of 5")
	}
	if consensus.PluralityPosterior([]int{2, 1, 1, 1}, 0, 0.2) >= consensus.PluralityPosterior([]int{2, 1, 1, 1}, 0, 0.1) {
		t.Error("more coincidence, no less sure")
	}
}
