package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

func TestEnding(t *testing.T) {
	t.Parallel()
	num := func(s string) answer { return answer{output: json.RawMessage(s)} }
	probs := &problems{golds: []float64{18}, answers: [][panelSize]answer{{num("18"), num("18.0"), num("7"), {failed: true}, num("9")}}}
	steps := func(sessions ...[]router.SessionID) *trust.Response {
		resp := &trust.Response{}
		for _, s := range sessions {
			resp.Evidence.Steps = append(resp.Evidence.Steps, trust.Step{Sessions: s})
		}
		return resp
	}
	checked := steps([]router.SessionID{3}, []router.SessionID{1})
	checked.Evidence.Steps[1].Check = true
	led := steps([]router.SessionID{1})
	led.Evidence.Leader = &reputation.Lead{Session: 1}
	for _, tc := range []struct {
		name string
		resp *trust.Response
		want string
	}{
		{"18 and 18.0 agree", steps([]router.SessionID{1}, []router.SessionID{2}), "2 runs: 2"},
		{"a failed run is in no group", steps([]router.SessionID{1, 4}, []router.SessionID{3}), "3 runs: 1+1"},
		{"the largest group first", steps([]router.SessionID{3, 1}, []router.SessionID{2, 5}), "4 runs: 2+1+1"},
		{"only failed runs", steps([]router.SessionID{4}), "1 runs: no answer"},
		{"a check counts in no group", checked, "1 runs: 1"},
		{"a leader", led, "a leader alone"},
	} {
		if got := ending(probs, 0, tc.resp, true); got != tc.want {
			t.Errorf("%s: ending = %q, want %q", tc.name, got, tc.want)
		}
	}
	// A validation groups verdicts: 18 and 7 are both VALID.
	valid, invalid := router.VerdictValid, router.VerdictInvalid
	claims := &problems{answers: [][panelSize]answer{{{verdict: valid}, {verdict: invalid}, {verdict: valid}, {failed: true}, {verdict: invalid}}}}
	for _, tc := range []struct {
		resp *trust.Response
		want string
	}{
		{steps([]router.SessionID{1, 3}), "2 runs: 2"},
		{steps([]router.SessionID{1, 2}, []router.SessionID{3, 4}), "4 runs: 2+1"},
		{steps([]router.SessionID{2, 5}, []router.SessionID{1}), "3 runs: 2+1"},
	} {
		if got := ending(claims, 0, tc.resp, false); got != tc.want {
			t.Errorf("validation over %v: ending = %q, want %q", tc.resp.Evidence.Steps, got, tc.want)
		}
	}
}

func TestEndings(t *testing.T) {
	t.Parallel()
	i := slices.IndexFunc(families, func(f family) bool { return f.delegates() })
	f := &families[i]
	cfg := config{outcomes: []float64{0.05}}
	bind := worldCell{trust.PolicyAdaptive, cfg.binding()}
	// 250 calls: the first is earlier, not measured. Of the 249 measured,
	// 100 stopped on a pair (adaptive right on 90, the plurality of 5 on
	// 95), 148 on five answers (RETRY, the plurality right on 20), and one
	// ended otherwise, under the share a row of its own takes.
	calls := make([]call, 250)
	fiveWrong := make([]bool, 250)
	bestRight := make([]bool, 250) // on the pairs' calls 80 to 99
	for i := 80; i < 100; i++ {
		bestRight[i] = true
	}
	for i := range calls {
		switch {
		case i == 0:
			calls[i] = call{ending: "2 runs: 2", answered: true, confidence: 1, correct: true}
		case i <= 100:
			calls[i] = call{ending: "2 runs: 2", answered: true, confidence: 0.95, correct: i <= 90}
			fiveWrong[i] = i > 95
		case i <= 248:
			calls[i] = call{ending: "5 runs: 1+1+1+1+1", status: trust.StatusRetry}
			fiveWrong[i] = i > 120
		default:
			calls[i] = call{ending: "4 runs: 3+1", answered: true, confidence: 0.8, correct: true}
		}
	}
	measured := func(i int) bool { return i > 0 }
	got := tallyEndings(calls, measured, fiveWrong, bestRight)
	want := map[string]endingTally{
		"2 runs: 2":         {calls: 100, right: 90, fiveRight: 95, bestRight: 20, answered: 100, answeredRight: 90, stated: 95},
		"5 runs: 1+1+1+1+1": {calls: 148, fiveRight: 20},
		"4 runs: 3+1":       {calls: 1, right: 1, fiveRight: 1, answered: 1, answeredRight: 1, stated: 0.8},
	}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(endingTally{}), cmp.Comparer(func(a, b float64) bool { return a-b < 1e-9 && b-a < 1e-9 })); diff != "" {
		t.Errorf("tallyEndings (-want +got):\n%s", diff)
	}

	w := &world{fam: f, warm: 1, n: 250}
	r := &worldResult{w: w, endings: map[worldCell]map[string]endingTally{bind: got}}
	rep := &worldsReport{cfg: cfg, results: map[string][]*worldResult{f.name: {r}}}
	var b strings.Builder
	rep.endings(&b, f)
	for _, row := range []string{
		"| ending | share of the calls | adaptive right | plurality of 5 right | best single right |",
		"| 2 runs: 2 | 40.2% | 90.0% | 95.0% | 20.0% | 100.0% | 0.950 | 90.0% |",
		"| 5 runs: 1+1+1+1+1 | 59.4% | 0.0% | 13.5% | 0.0% | 0.0% | — | — |",
		"| any other (under 0.5% of the calls each) | 0.4% | 100.0% | 100.0% | 0.0% | 100.0% | 0.800 | 100.0% |",
	} {
		if !strings.Contains(b.String(), row) {
			t.Errorf("endings lack the row %q:\n%s", row, b.String())
		}
	}
	if strings.Index(b.String(), "5 runs:") > strings.Index(b.String(), "| 2 runs: 2") {
		t.Errorf("endings are not in order of calls:\n%s", b.String())
	}

	v := &families[slices.IndexFunc(families, func(f family) bool { return !f.delegates() })]
	rep.results[v.name] = []*worldResult{r}
	b.Reset()
	rep.endings(&b, v)
	if want := "| ending | share of the calls | adaptive right | majority of 5 right | best single right |"; !strings.Contains(b.String(), want) {
		t.Errorf("endings of a validation family lack %q:\n%s", want, b.String())
	}
	rep.results[v.name] = []*worldResult{{w: w}}
	b.Reset()
	rep.endings(&b, v)
	if b.Len() != 0 {
		t.Errorf("endings of no adaptive call:\n%s", b.String())
	}
}
