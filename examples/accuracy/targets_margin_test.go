package main

import (
	"slices"
	"testing"

	"github.com/vouchkit/vouch/trust"
)

// emptyWorld returns a world result of family f with empty maps.
func emptyWorld(f *family, warm, n int) *worldResult {
	return &worldResult{w: &world{fam: f, warm: warm, n: n}, cells: map[worldCell]stats{}, floors: map[worldCell]float64{},
		together: map[worldCell]stats{}, outcomes: map[worldCell]stats{}, retries: map[worldCell]retries{},
		endings: map[worldCell]map[string]endingTally{}}
}

// familyNamed returns the family of that name.
func familyNamed(name string) *family {
	return &families[slices.IndexFunc(families, func(f family) bool { return f.name == name })]
}

// A world exactly 0.5 point under the plurality of 5 (795 of 1,000
// against 800 of 1,000) meets "adaptive at least the plurality of 5 −
// 0.5 point"; and safe exactly 0.5 point under reputation off (3,980 of
// 4,000 against 4,000) meets "at most 0.5 point less accurate".
func TestTargets_exactMarginIsMet(t *testing.T) {
	cfg := config{outcomes: []float64{0, 0.05}}
	bind, none := cfg.binding(), setting{rep: on}
	off := setting{rep: off}

	gsm := emptyWorld(familyNamed("gsm8k-small"), 0, 1000)
	gsm.five = stats{calls: 1000, correct: 800}
	gsm.cells[worldCell{trust.PolicyAdaptive, bind}] = stats{calls: 1000, correct: 795}
	for _, pol := range tiers {
		for _, st := range []setting{off, none} {
			gsm.cells[worldCell{pol, st}] = stats{calls: 1000, correct: 900}
		}
	}
	ts := gsm.targets(cfg)
	g := &worldsReport{cfg: cfg, results: map[string][]*worldResult{"gsm8k-small": {gsm}}}
	if ft := g.familyTargets(familyNamed("gsm8k-small"))[0]; ft.met != ft.worlds {
		t.Errorf("%s: figure %v (%s), margin %v: missed at exactly -0.5 point", ts[0].what, ts[0].figure, ts[0].text, ts[0].margin)
	}

	v := emptyWorld(familyNamed("lookalike"), 0, 4000)
	v.five, v.best = stats{calls: 4000, correct: 3000}, stats{calls: 4000, correct: 3000}
	for _, pol := range tiers {
		for _, st := range cfg.settings() {
			v.cells[worldCell{pol, st}] = stats{calls: 4000, correct: 4000}
		}
	}
	v.cells[worldCell{trust.PolicySafe, none}] = stats{calls: 4000, correct: 3980}
	rep := &worldsReport{cfg: cfg, results: map[string][]*worldResult{"lookalike": {v}}}
	for _, ft := range rep.familyTargets(familyNamed("lookalike")) {
		if ft.what == "with no outcome, safe and adaptive at most 0.5 point less accurate than reputation off" {
			if ft.met != ft.worlds {
				t.Errorf("%s: worst %s, met on %d of %d: missed at exactly -0.5 point", ft.what, ft.worst, ft.met, ft.worlds)
			}
		}
	}
}

// The RETRY row's median "right" is over the worlds where adaptive
// answered RETRY: a world with no RETRY has no share right to count.
func TestRetried_medianSkipsWorldsWithoutRetry(t *testing.T) {
	f := familyNamed("gsm8k-small")
	cfg := config{outcomes: []float64{0.05}}
	c := worldCell{trust.PolicyAdaptive, cfg.binding()}
	var rs []*worldResult
	for _, rt := range []retries{{}, {calls: 10, right: 10}, {calls: 10, right: 10}, {}} {
		wr := emptyWorld(f, 0, 100)
		wr.cells[c] = stats{calls: 100}
		wr.retries[c] = rt
		rs = append(rs, wr)
	}
	rep := &worldsReport{cfg: cfg, results: map[string][]*worldResult{f.name: rs}}
	_, median, _ := rep.retried(f)
	if want := "5.0% of the calls, 100.0% right"; median != want {
		t.Errorf("median = %q, want %q: every RETRY on every world was right", median, want)
	}
}

// binding: "the share of outcomes bindingOutcomeShare if measured, else
// the largest measured".
func TestConfig_bindingIsTheLargest(t *testing.T) {
	cfg := config{outcomes: []float64{0.1, 0.02}}
	if b := cfg.binding(); b.outcomes != 0.1 {
		t.Errorf("binding() = %v with -outcomes 0.1,0.02; want the largest, 10%%", b)
	}
}

// reportsTold's "met on" for a delegation: followed exactly 0.5 point
// under the plurality of 5 meets the accuracy target's margin.
func TestReportsTold_exactMarginIsMet(t *testing.T) {
	f := familyNamed("gsm8k-small")
	wr := emptyWorld(f, 0, 1000)
	wr.five = stats{calls: 1000, correct: 800}
	wr.followed = stats{calls: 1000, correct: 795}
	rep := &worldsReport{cfg: config{outcomes: []float64{0.05}}, results: map[string][]*worldResult{f.name: {wr}}}
	_, worst, _, met, n, _ := rep.reportsTold(f, false)
	if met != n {
		t.Errorf("followed 795/1000 against 800/1000: worst %s, met on %d of %d; want met (the margin is 0.5 point)", worst, met, n)
	}
}

// TestFormatLike checks that a median is written in its figure's units,
// keeping the sign of a signed figure, so that "+0.004" and a median of
// zero read as differences alike.
func TestFormatLike(t *testing.T) {
	for _, tc := range []struct {
		text string
		x    float64
		want string
	}{
		{"-0.72 points", -0.0022, "-0.22 points"},
		{"2.43 runs", 1.666, "1.67 runs"},
		{"+0.004", 0, "+0.000"},
		{"-0.038", -0.0741, "-0.074"},
		{"0.083 (fast; bound 0.030)", 0.048, "0.048"},
	} {
		if got := formatLike(tc.text, tc.x); got != tc.want {
			t.Errorf("formatLike(%q, %v) = %q, want %q", tc.text, tc.x, got, tc.want)
		}
	}
}
