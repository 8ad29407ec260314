package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestFollowReports: call by call, the rule followed is the one right
// most often on the calls reported before it, the majority on a tie; with
// hindsight, the one right most often on every reported call, from the
// first call on. An unreported call teaches nothing.
func TestFollowReports(t *testing.T) {
	// Three rules over six calls: the majority is right on the first two,
	// session 1 on the last four, session 2 never. Calls 0, 2, 3 and 5
	// are reported; call 4 is not.
	right := [][]bool{
		{true, true, false, false, false, false},
		{false, false, true, true, true, true},
		{false, false, false, false, false, false},
	}
	rules := make([][]call, len(right))
	for r, rs := range right {
		for _, ok := range rs {
			rules[r] = append(rules[r], call{correct: ok, launched: r + 1})
		}
	}
	reported := func(i int) bool { return i != 1 && i != 4 }
	followed := func(hindsight bool) []int {
		var which []int
		for _, c := range followReports(rules, reported, hindsight) {
			which = append(which, c.launched-1)
		}
		return which
	}
	// Before call 3 the record is majority 1, session 1 one: a tie, kept
	// by the majority; before call 4, session 1 leads 2 to 1.
	if diff := cmp.Diff([]int{0, 0, 0, 0, 1, 1}, followed(false)); diff != "" {
		t.Errorf("rules followed call by call (-want +got):\n%s", diff)
	}
	// On every reported call session 1 is right three times, the majority
	// once.
	if diff := cmp.Diff([]int{1, 1, 1, 1, 1, 1}, followed(true)); diff != "" {
		t.Errorf("rules followed with hindsight (-want +got):\n%s", diff)
	}
}
