package main

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/trust"
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

// TestAgainstOthers: a session's record against the strict majority of
// the other four counts the calls it voted otherwise, and those it got
// right; a call where the others split two to two counts in neither.
func TestAgainstOthers(t *testing.T) {
	v, x := trust.StatusValid, trust.StatusInvalid
	// Three calls whose truth is VALID: the others' majority INVALID
	// (session 1 agrees: no disagreement), INVALID again (session 1 votes
	// VALID: a disagreement won), split two to two.
	votes := [][panelSize]trust.Status{
		{x, x, x, x, v},
		{v, x, x, x, v},
		{x, v, v, x, x},
	}
	var single [panelSize][]call
	for _, vs := range votes {
		for s, st := range vs {
			single[s] = append(single[s], call{status: st, correct: st == v})
		}
	}
	if diff := cmp.Diff(dissent{calls: 3, disagreed: 1, won: 1}, againstOthers(single, 0), cmp.AllowUnexported(dissent{})); diff != "" {
		t.Errorf("session 1 against the others (-want +got):\n%s", diff)
	}
	// Session 5 votes VALID against the others' INVALID on the first two
	// calls (both won); on the third the others split two to two.
	if diff := cmp.Diff(dissent{calls: 3, disagreed: 2, won: 2}, againstOthers(single, 4), cmp.AllowUnexported(dissent{})); diff != "" {
		t.Errorf("session 5 against the others (-want +got):\n%s", diff)
	}
}

// TestWeighedMajority: four sessions that vote INVALID on every claim
// that does not hold and on four in five that do, beside one right on
// three claims in four whatever the truth. Weighed one way, the four
// read right 60% of the time and outvote the one wherever they
// disagree; weighed two ways, their INVALID says little (they give it
// to most claims that hold), and the one decides those calls.
func TestWeighedMajority(t *testing.T) {
	const each = 100 // claims that hold, then as many that do not
	var single [panelSize][]call
	for i := range 2 * each {
		holds, j := i < each, i%each
		single[0] = append(single[0], verdictCall((j < 75) == holds, holds)) // right on 75 of each
		for s := 1; s < panelSize; s++ {
			single[s] = append(single[s], verdictCall(holds && j >= 80, holds))
		}
	}
	one, two := weighedMajority(single, func(int) bool { return true })
	right := func(calls []call) int {
		n := 0
		for _, c := range calls {
			if c.correct {
				n++
			}
		}
		return n
	}
	// One way: the one (log-odds 1.07) loses to the four (4 × 0.40)
	// wherever they disagree, so every claim that holds but the 20 the
	// four call VALID is missed. Two ways: the four's INVALID weighs
	// 4 × −0.22, the one's VALID 1.07, so the 75 claims that hold are
	// found and the 25 that do not, where the one says VALID, missed.
	if got, want := right(one), 120; got != want {
		t.Errorf("weighed one way: %d of %d right, want %d", got, 2*each, want)
	}
	if got, want := right(two), 170; got != want {
		t.Errorf("weighed two ways: %d of %d right, want %d", got, 2*each, want)
	}
	none, _ := weighedMajority(single, func(int) bool { return false })
	if got := right(none); got != each {
		t.Errorf("with no call rated every vote weighs nothing and every call answers INVALID: %d right, want %d", got, each)
	}
}
