package consensus_test

import (
	"math"
	"testing"

	"github.com/vouchkit/vouch/consensus"
)

// coincidences returns E(w, g) of PluralityPosterior's doc by its
// rising factorials: the chance, at coincide c worth CoincidenceStrength
// answers, that wrong answers took same coincidences and fresh new
// answers in a given order.
func coincidences(same, fresh int, c float64) float64 {
	t := float64(consensus.CoincidenceStrength)
	e := 1.0
	for j := range same {
		e *= (t*c + float64(j)) / (t + float64(j))
	}
	for j := range fresh {
		e *= (t*(1-c) + float64(j)) / (t + float64(same+j))
	}
	return e
}

// pairAmongSingles is PluralityPosterior([2, 1, 1, 1], 0, c) written
// out: B(3, 4) = 1/60, B(2, 5) = 1/30, B(1, 6) = 1/6.
func pairAmongSingles(c float64) float64 {
	pair := coincidences(0, 2, c) / 60
	single := coincidences(1, 2, c) / 30
	none := coincidences(1, 3, c) / 6
	return pair / (pair + 3*single + none)
}

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
		{"a pair among three single answers", []int{2, 1, 1, 1}, 0, 0.05, pairAmongSingles(0.05)},
		{"the same at 0.1", []int{2, 1, 1, 1}, 0, 0.1, pairAmongSingles(0.1)},
		{"one of two single answers", []int{1, 1}, 1, 0.1, (1.0 / 6) / (2.0/6 + (1-0.1)/3)},
		{"wrong answers always coincide: two single answers are one right, one wrong", []int{1, 1}, 0, 1, 0.5},
		{"NaN reads the default", []int{2}, 0, math.NaN(), 1 / (1 + consensus.DefaultCoincidence)},
		{"wrong answers never coincide: a pair is right", []int{2, 1, 1}, 0, 0, 1},
		{"winner out of range", []int{2, 1}, 2, 0.1, 0},
		{"an empty group", []int{2, 0}, 0, 0.1, 0},
	} {
		if got := consensus.PluralityPosterior(c.groups, c.winner, c.coincide); !(math.Abs(got-c.want) <= 1e-12) {
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

func TestPluralityPosteriorAt(t *testing.T) {
	// B(5,3) = 1/105, B(4,4) = 1/140, B(6,2) = 1/42 at reliability 0.8;
	// the single answer right leaves the pair to coincide, none right
	// adds a new wrong answer.
	pairBesideOne := 1 / (1 + 42*(coincidences(1, 0, 0.1)/105+coincidences(1, 1, 0.1)/140))
	for _, c := range []struct {
		name        string
		groups      []int
		coincide    float64
		reliability float64
		want        float64
	}{
		{"one answer states the reliability", []int{1}, 0.1, 0.8, 0.8},
		{"whatever the coincidence", []int{1}, 0.4, 0.65, 0.65},
		{"a pair beside one other answer", []int{2, 1}, 0.1, 0.8, pairBesideOne},
		{"a reliability above the bound", []int{1}, 0.1, 1.5, consensus.MaxReliability},
		{"NaN reads the default", []int{1}, 0.1, math.NaN(), consensus.DefaultReliability},
		{"an empty group", []int{2, 0}, 0.1, 0.8, 0},
	} {
		if got := consensus.PluralityPosteriorAt(c.groups, 0, c.coincide, c.reliability); !(math.Abs(got-c.want) <= 1e-12) {
			t.Errorf("%s: PluralityPosteriorAt(%v, 0, %v, %v) = %v, want %v", c.name, c.groups, c.coincide, c.reliability, got, c.want)
		}
	}
	// A surer panel makes a plurality surer; the uniform prior is
	// more doubtful of a panel right four times in five.
	at := func(r float64) float64 { return consensus.PluralityPosteriorAt([]int{2, 1, 1, 1}, 0, 0.1, r) }
	if !(at(0.6) < at(0.8) && at(0.8) < at(0.95)) {
		t.Errorf("a pair among single answers at 0.6, 0.8, 0.95: %v, %v, %v; want increasing", at(0.6), at(0.8), at(0.95))
	}
	if u := consensus.PluralityPosterior([]int{2, 1, 1, 1}, 0, 0.1); u >= at(0.8) {
		t.Errorf("uniform %v, at 0.8 %v: want the uniform below", u, at(0.8))
	}
}

// TestPluralityPosteriorAt_edges: at any coincidence and reliability,
// the extremes included, each group's posterior is a probability and
// the groups' sum is at most one ("none" takes the rest).
func TestPluralityPosteriorAt_edges(t *testing.T) {
	for _, groups := range [][]int{{1}, {2}, {1, 1}, {2, 1}, {2, 2, 1}, {1, 1, 1, 1, 1}, {5}, {3, 2}, {4, 1}} {
		for _, c := range []float64{0, 1e-300, 1e-9, 0.5, 1 - 1e-12, 1, -1, 2, math.Inf(1), math.NaN()} {
			for _, r := range []float64{0.8, 0.01, 0.999, math.NaN()} {
				sum := 0.0
				for i := range groups {
					p := consensus.PluralityPosteriorAt(groups, i, c, r)
					if !(p >= 0 && p <= 1) {
						t.Errorf("PluralityPosteriorAt(%v, %d, %v, %v) = %v, want a probability", groups, i, c, r, p)
					}
					sum += p
				}
				if sum > 1+1e-9 {
					t.Errorf("groups %v at %v, %v: posteriors sum to %v", groups, c, r, sum)
				}
			}
		}
	}
}

// TestPluralityPosteriorsAt: each group's posterior, all weighed at
// once, is exactly what PluralityPosteriorAt states for it, and a group
// of no answer makes every posterior 0.
func TestPluralityPosteriorsAt(t *testing.T) {
	for _, groups := range [][]int{{1}, {2}, {2, 1}, {1, 2}, {2, 1, 1, 1}, {1, 2, 1, 2}, {2, 2, 1}, {1, 1, 1, 1, 1}, {3, 2}, {1, 3, 1}} {
		for _, c := range []float64{0, 0.1, 0.25, 1, math.NaN()} {
			for _, r := range []float64{0.5, 0.8, math.NaN()} {
				got := consensus.PluralityPosteriorsAt(nil, groups, c, r)
				if len(got) != len(groups) {
					t.Fatalf("PluralityPosteriorsAt(%v, %v, %v): %d posteriors, want %d", groups, c, r, len(got), len(groups))
				}
				for i := range groups {
					if want := consensus.PluralityPosteriorAt(groups, i, c, r); got[i] != want && !(math.IsNaN(got[i]) && math.IsNaN(want)) {
						t.Errorf("PluralityPosteriorsAt(%v, %v, %v)[%d] = %v, want %v", groups, c, r, i, got[i], want)
					}
				}
			}
		}
	}
	if got := consensus.PluralityPosteriorsAt([]float64{0.5}, []int{2, 0, 1}, 0.1, 0.8); len(got) != 4 || got[0] != 0.5 || got[1] != 0 || got[2] != 0 || got[3] != 0 {
		t.Errorf("PluralityPosteriorsAt after 0.5 with an empty group = %v, want [0.5 0 0 0]", got)
	}
}
