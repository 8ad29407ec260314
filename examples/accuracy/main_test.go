package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/trust"
)

var rates = []float64{0.1, 0.2, 0.3, easyWorkload}

// small runs the simulation at a test's size, with thresholds 0 and 0.7
// in the sweep: never settling on one run, and settling on every first
// run (every easy claim's confidence is at least 0.7).
func small(t *testing.T, calls int, seed uint64) *report {
	t.Helper()
	rep, err := simulate(context.Background(), config{calls: calls, seed: seed, rates: rates, sweep: []float64{0, 0.7}}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	return rep
}

func TestSimulate(t *testing.T) {
	const calls = 400
	rep := small(t, calls, 7)
	if got, want := len(rep.cells), len(rates)*6; got != want {
		t.Fatalf("%d cells measured, want %d", got, want)
	}
	for _, p := range rates {
		fast, safe := rep.get(p, trust.PolicyFast, defaultThreshold), rep.get(p, trust.PolicySafe, defaultThreshold)
		oracle, adaptive := rep.get(p, trust.PolicyOracle, defaultThreshold), rep.get(p, trust.PolicyAdaptive, defaultThreshold)
		at0, at07 := rep.get(p, trust.PolicyAdaptive, 0), rep.get(p, trust.PolicyAdaptive, 0.7)

		// Runs per call, call by call.
		for _, tt := range []struct {
			name     string
			t        *tally
			min, max int
		}{
			{"fast", fast, 1, 1}, {"safe", safe, 3, 3}, {"oracle", oracle, 5, 5},
			{"adaptive", adaptive, 1, 5},
			{"adaptive at threshold 0", at0, 2, 5}, // one run never settles a call
			{"adaptive at threshold 0.7", at07, 1, 5},
		} {
			if tt.t.calls != calls || tt.t.minReplicas < tt.min || tt.t.maxReplicas > tt.max {
				t.Errorf("p=%.3g %s: %d calls spending %d to %d runs, want %d calls spending %d to %d",
					p, tt.name, tt.t.calls, tt.t.minReplicas, tt.t.maxReplicas, calls, tt.min, tt.max)
			}
		}
		// Adaptive's batches: 1, then 1 (2 runs), then 2 after a split (4),
		// then 1 (5); it never stops at 3.
		for n := range adaptive.stops {
			if n < 1 || n > 5 || n == 3 {
				t.Errorf("p=%.3g adaptive: a call launched %d runs, want 1, 2, 4 or 5", p, n)
			}
		}
		if adaptive.stops[2] == 0 || adaptive.stops[4] == 0 || adaptive.stops[5] == 0 {
			t.Errorf("p=%.3g adaptive: stops %v, want calls settled at 2, 4 and 5 runs", p, adaptive.stops)
		}

		// best_effort over an odd number of two-valued votes always has a
		// strict majority, and so do adaptive's two-valued tallies at 2, 4
		// or 5 runs; fail_hard answers only unanimous steps.
		for name, tl := range map[string]*tally{"fast": fast, "safe": safe, "adaptive": adaptive} {
			if tl.answered != tl.calls {
				t.Errorf("p=%.1f %s: %d of %d calls answered, want all", p, name, tl.answered, tl.calls)
			}
		}
		if oracle.answered == oracle.calls {
			t.Errorf("p=%.1f oracle answered every call; want RETRY where replicas dissent", p)
		}

		// Threshold 0.7 settles every easy claim on its first run: the
		// runs per call are those of the hard claims' share alone.
		if at07.stops[1] < at0.stops[1] || at07.meanReplicas() >= at0.meanReplicas() {
			t.Errorf("p=%.3g: threshold 0.7 spends %.2f runs, not fewer than %.2f at 0", p, at07.meanReplicas(), at0.meanReplicas())
		}
		// The stated confidence of an answered call is a Posterior of a
		// tally of at most 5 votes.
		for c := range adaptive.byConfidence {
			if tallies(c) == "" {
				t.Errorf("p=%.3g adaptive stated confidence %v, which no tally of up to 5 votes gives", p, c)
			}
		}

		// The one-step tiers agree with the model's exact expectation,
		// within 4 standard errors.
		for _, tt := range []struct {
			name     string
			t        *tally
			n        int
			failHard bool
		}{{"fast", fast, 1, false}, {"safe", safe, 3, false}, {"oracle", oracle, 5, true}} {
			acc, cov := expected(p, tt.n, tt.failHard)
			for what, pair := range map[string][2]float64{"accuracy": {tt.t.accuracy(), acc}, "coverage": {tt.t.coverage(), cov}} {
				got, want := pair[0], pair[1]
				if se := math.Sqrt(want * (1 - want) / calls); math.Abs(got-want) > 4*se+1e-9 {
					t.Errorf("p=%.1f %s %s = %.4f, model says %.4f (4 SE = %.4f)", p, tt.name, what, got, want, 4*se)
				}
			}
		}
	}
	fast, safe := rep.get(0.3, trust.PolicyFast, defaultThreshold), rep.get(0.3, trust.PolicySafe, defaultThreshold)
	if safe.accuracy() <= fast.accuracy() {
		t.Errorf("p=0.3: safe accuracy %.3f is not above fast's %.3f", safe.accuracy(), fast.accuracy())
	}
}

func TestSimulate_seeded(t *testing.T) {
	a, b, c := small(t, 150, 3), small(t, 150, 3), small(t, 150, 4)
	for k, ta := range a.cells {
		if diff := cmp.Diff(ta.statuses, b.cells[k].statuses); diff != "" {
			t.Errorf("%s: same seed, different statuses (-first +second):\n%s", k, diff)
		}
		if ta.replicas != b.cells[k].replicas {
			t.Errorf("%s: same seed, %d then %d replicas", k, ta.replicas, b.cells[k].replicas)
		}
	}
	k := cell{0.1, trust.PolicyAdaptive, defaultThreshold}
	if cmp.Equal(a.cells[k].statuses, c.cells[k].statuses) {
		t.Errorf("seeds 3 and 4 gave the same 150 adaptive statuses")
	}
}

func TestMajority(t *testing.T) {
	// Worked by hand: 0.9³ + 3·0.9²·0.1; 0.7⁵ + 5·0.7⁴·0.3 + 10·0.7³·0.3².
	for _, tt := range []struct {
		n    int
		e    float64
		want float64
	}{{1, 0.2, 0.8}, {3, 0.1, 0.972}, {5, 0.3, 0.83692}, {3, 0.5, 0.5}} {
		if got := majority(tt.n, tt.e); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("majority(%d, %v) = %v, want %v", tt.n, tt.e, got, tt.want)
		}
	}
}

func TestWorkerModel(t *testing.T) {
	// The error rate over the workload is the worker's p; easy claims are
	// 90% of it.
	const n = 40000
	claims := workload(11, n)
	for _, p := range rates {
		if acc, _ := expected(p, 1, false); math.Abs(acc-(1-p)) > 1e-12 {
			t.Errorf("p=%.1f: the model's single-replica accuracy is %v, want %v", p, acc, 1-p)
		}
		var wrong, hard int
		for i, c := range claims {
			if c.hard {
				hard++
			}
			if a := judge(11, p, false, i, c, 1); a.verdict != c.truth {
				wrong++
			}
		}
		for what, pair := range map[string][2]float64{"error rate": {float64(wrong) / n, p}, "hard share": {float64(hard) / n, hardShare}} {
			got, want := pair[0], pair[1]
			if se := math.Sqrt(want * (1 - want) / n); math.Abs(got-want) > 4*se {
				t.Errorf("p=%.1f: %s %.4f, want %.4f ± %.4f", p, what, got, want, 4*se)
			}
		}
	}
}

func TestRun_writesTablesAndChart(t *testing.T) {
	dir := t.TempDir()
	md, svg := filepath.Join(dir, "acc.md"), filepath.Join(dir, "acc.svg")
	cfg := config{calls: 60, seed: 1, rates: rates}
	if err := run(context.Background(), cfg, "0.7", md, svg, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	table, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, p := range rates {
		for _, row := range []string{"fast", "safe", "oracle", "adaptive", "majority of 5, model"} {
			want = append(want, fmt.Sprintf("| %s | %s |", rateName(p), row))
		}
	}
	want = append(want, "| 0.7 |", "| 0 (default) |", "-calls 60 -seed 1`", "| 0.875 | 2–0 |", "accuracy ≥ 90.5% at ≤ 2.8 runs per call")
	for _, w := range want {
		if !bytes.Contains(table, []byte(w)) {
			t.Errorf("the tables lack %q:\n%s", w, table)
		}
	}
	chart, err := os.ReadFile(svg)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(chart, []byte("<svg")) || !bytes.Contains(chart, []byte("adaptive over thresholds")) {
		t.Errorf("the chart is not an SVG with the legend: %.200s", chart)
	}
}

func TestParseSweep(t *testing.T) {
	got, err := parseSweep(" 0.9, 0.5,,1")
	if want := []float64{0.9, 0.5, 1}; err != nil || !slices.Equal(got, want) {
		t.Errorf("parseSweep = %v, %v; want %v", got, err, want)
	}
	for _, bad := range []string{"1.5", "-0.1", "x", "NaN"} {
		if _, err := parseSweep(bad); err == nil || !strings.Contains(err.Error(), "-sweep") {
			t.Errorf("parseSweep(%q) error = %v, want one naming -sweep", bad, err)
		}
	}
}
