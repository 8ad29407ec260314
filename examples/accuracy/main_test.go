package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

var update = flag.Bool("update", false, "write testdata/today.golden from this build (only from today's engine: see TestReputationOff_today)")

// smallCfg is the test's size: every workload, in two episodes of 60
// calls, the learning curve at 0, 10 and 30 earlier calls, reputation on
// with no outcome reported and with 5%, and adaptive also at escalation
// threshold 0.7, where a lone run of every easy claim settles the call
// (easy claims report 0.7 or more).
var smallCfg = config{calls: 120, seed: 7, episode: 60, curve: []int{0, 10, 30}, sweep: []float64{0.7}, outcomes: []float64{0, 0.05}}

var (
	smallOnce sync.Once
	smallRep  *report
	smallErr  error
)

// small runs the simulation at the test's size, once for every test.
func small(t *testing.T) *report {
	t.Helper()
	smallOnce.Do(func() { smallRep, smallErr = simulate(context.Background(), smallCfg, io.Discard) })
	if smallErr != nil {
		t.Fatal(smallErr)
	}
	return smallRep
}

func TestSimulate(t *testing.T) {
	t.Parallel()
	rep := small(t)
	// Every tier with each variant, fast on an engine shared with adaptive,
	// and adaptive at threshold 0.7 with each variant.
	want := len(workloads) * (len(tiers)*len(rep.settings()) + len(rep.settings()) - 1 + len(sweepSettings))
	if len(rep.cells) != want {
		t.Fatalf("%d cells measured, want %d", len(rep.cells), want)
	}
	retriesReported := 0
	for c, calls := range rep.cells {
		if len(calls) != smallCfg.calls {
			t.Fatalf("%s: %d calls, want %d", c, len(calls), smallCfg.calls)
		}
		answered := 0
		for i, k := range calls {
			sum := 0
			for _, n := range k.runs {
				sum += n
				if n > 1 {
					t.Errorf("%s claim %d: a session ran %d runs of one call, want at most 1", c, i, n)
				}
			}
			if sum != k.launched {
				t.Errorf("%s claim %d: runs on sessions %v add up to %d, launched %d", c, i, k.runs, sum, k.launched)
			}
			if !(k.confidence >= 0 && k.confidence <= 1) {
				t.Errorf("%s claim %d: confidence %v outside [0, 1]", c, i, k.confidence)
			}
			if k.answered {
				answered++
			}
			// The host reports the verdict of each drawn claim: every
			// answered call, and a RETRY unless its votes tied.
			if drawn := c.rep == on && reports(smallCfg.seed, c.draw, i, c.outcomes); k.reported && !drawn || drawn && k.answered && !k.reported {
				t.Errorf("%s claim %d (%s): verdict reported = %v, drawn %v", c, i, k.status, k.reported, drawn)
			}
			if k.reported && k.status == trust.StatusRetry {
				retriesReported++
			}
			lo, hi := runsOf(c.policy, c.rep)
			if c.lone != 0 {
				lo = 1
			}
			if k.launched < lo || k.launched > hi || (c.policy == trust.PolicyAdaptive && c.rep == off && k.launched == 3) {
				t.Errorf("%s claim %d: %d runs launched, want %d to %d", c, i, k.launched, lo, hi)
			}
			if c.rep == off && c.policy == trust.PolicyAdaptive && k.answered && c.lone == 0 &&
				!isPosterior(k.confidence) {
				t.Errorf("%s claim %d: stated confidence %v is the Posterior of no tally of up to 5 votes", c, i, k.confidence)
			}
		}
		switch {
		case c.policy == trust.PolicyOracle && answered == len(calls):
			t.Errorf("%s answered every call; want RETRY where replicas dissent", c)
		case c.policy != trust.PolicyOracle && c.rep == off && answered != len(calls):
			t.Errorf("%s answered %d of %d calls, want all", c, answered, len(calls))
		}
	}
	if retriesReported == 0 {
		t.Error("no call that answered RETRY had its claim's verdict reported")
	}
	// At threshold 0.7 a lone run settles some calls, and adaptive spends
	// fewer runs than at the default.
	for _, wl := range workloads {
		for _, v := range sweepSettings {
			at07 := summarize(rep.cells[cell{workload: wl.name, policy: trust.PolicyAdaptive, rep: v.rep, lone: 0.7}], nil)
			at0 := summarize(rep.get(wl.name, trust.PolicyAdaptive, v), nil)
			if at07.runsPerCall() >= at0.runsPerCall() {
				t.Errorf("%s reputation %s: threshold 0.7 spends %.2f runs per call, not fewer than %.2f at 0", wl.name, v, at07.runsPerCall(), at0.runsPerCall())
			}
		}
	}
	// Reported outcomes reach the book: adaptive answers otherwise.
	for _, wl := range workloads {
		none, some := rep.get(wl.name, trust.PolicyAdaptive, setting{rep: on}), rep.get(wl.name, trust.PolicyAdaptive, setting{rep: on, outcomes: 0.05})
		if cmp.Equal(none, some, cmp.AllowUnexported(call{}), cmp.FilterPath(func(p cmp.Path) bool { return p.Last().String() == ".reported" }, cmp.Ignore())) {
			t.Errorf("%s: adaptive answered every call the same with 5%% of outcomes reported as with none", wl.name)
		}
	}
	// The reference is the plain majority of the five sessions' votes.
	for _, wl := range workloads {
		for i, c := range rep.claims[wl.name] {
			right := 0
			for s := router.SessionID(1); s <= panelSize; s++ {
				if wl.judge(smallCfg.seed, i, c, s).verdict == c.truth {
					right++
				}
			}
			if got := rep.five[wl.name][i].correct; got != (right >= 3) {
				t.Errorf("%s claim %d: majority of 5 correct = %v with %d of 5 right", wl.name, i, got, right)
			}
		}
	}
}

// runsOf returns the fewest and most runs a call of pol may launch.
func runsOf(pol trust.Policy, v variant) (lo, hi int) {
	switch pol {
	case trust.PolicyFast:
		return 1, 1
	case trust.PolicySafe:
		return 3, 3
	case trust.PolicyOracle:
		return 5, 5
	}
	if v == off {
		return 2, 5 // a lone run never settles a call by default
	}
	return 1, 5
}

// isPosterior reports whether c is the Posterior of a tally of up to 5 votes.
func isPosterior(c float64) bool {
	for a := 1; a <= 5; a++ {
		for d := 0; a+d <= 5; d++ {
			if consensus.Posterior(a, d) == c {
				return true
			}
		}
	}
	return false
}

// TestReputationOff_today checks that reputation off answers every call
// exactly as today's engine did, bit for bit: testdata/today.golden was
// written by `go test ./examples/accuracy -run TestReputationOff_today
// -update` on the engine before learned reputation existed.
func TestReputationOff_today(t *testing.T) {
	t.Parallel()
	rep := small(t)
	var got bytes.Buffer
	for _, wl := range workloads {
		for _, pol := range tiers {
			for i, k := range rep.get(wl.name, pol, setting{rep: off}) {
				fmt.Fprintf(&got, "%s %s %d %s %s %d %v\n", wl.name, pol, i, k.status,
					strconv.FormatFloat(k.confidence, 'g', -1, 64), k.launched, k.runs)
			}
		}
	}
	path := filepath.Join("testdata", "today.golden")
	if *update {
		if err := os.WriteFile(path, got.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(golden(t, path, got.String()), strings.Split(got.String(), "\n")); diff != "" {
		t.Errorf("reputation off differs from today's engine (-today +now):\n%s", diff)
	}
}

func TestSimulate_seeded(t *testing.T) {
	t.Parallel()
	// The first episode of the small run, run again alone, answers the
	// same, reputation on included; another seed does not.
	for _, tt := range []struct {
		seed uint64
		same bool
	}{{smallCfg.seed, true}, {smallCfg.seed + 1, false}} {
		cfg := smallCfg
		cfg.calls, cfg.seed, cfg.only = cfg.episode, tt.seed, []string{"heterogeneous"}
		a, err := simulate(context.Background(), cfg, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		for c, calls := range a.cells {
			want := small(t).cells[c][:cfg.episode]
			if same := cmp.Equal(calls, want, cmp.AllowUnexported(call{})); same != tt.same {
				t.Errorf("seed %d, %s: same calls as seed %d = %v, want %v", tt.seed, c, smallCfg.seed, same, tt.same)
			}
		}
	}
}

// TestMeasure_deterministic runs 400 adaptive calls with reputation on
// twice: enough runs for the engine's share window (500 runs) to forget,
// in the order the runs reached it, so that the turns of adaptive's
// concurrent router calls matter.
func TestMeasure_deterministic(t *testing.T) {
	t.Parallel()
	wl := &workloads[0]
	cs := wl.claims(3, 0, 400)
	c := cell{workload: wl.name, policy: trust.PolicyAdaptive, rep: on}
	var runs [2][]call
	for i := range runs {
		var err error
		if runs[i], _, _, err = measure(context.Background(), 3, c, simulated{3, wl, cs}, 0, len(cs)); err != nil {
			t.Fatal(err)
		}
	}
	if diff := cmp.Diff(runs[0], runs[1], cmp.AllowUnexported(call{})); diff != "" {
		t.Errorf("the same 400 calls answered otherwise the second time (-first +second):\n%s", diff)
	}
}

func TestWorkloads(t *testing.T) {
	t.Parallel()
	// Each session errs at its stated rate; traps are 10% of the trap
	// workload and 40% of them lure.
	const n = 40000
	for _, wl := range workloads {
		cs := wl.claims(11, 0, n)
		var traps, lured int
		for _, c := range cs {
			if c.trap {
				traps++
			}
			if c.lured {
				lured++
			}
		}
		for what, pair := range map[string][2]float64{
			"trap share":           {ratio(traps, n), wl.trapShare},
			"lured share of traps": {ratio(lured, max(traps, 1)), lureChance * math.Ceil(wl.trapShare)},
		} {
			got, want := pair[0], pair[1]
			if se := math.Sqrt(want * (1 - want) / n); math.Abs(got-want) > 4*se+0.02*want {
				t.Errorf("%s: %s %.4f, want %.4f", wl.name, what, got, want)
			}
		}
		for s := router.SessionID(1); s <= panelSize; s++ {
			wrong := 0
			for i, c := range cs {
				if wl.judge(11, i, c, s).verdict != c.truth {
					wrong++
				}
			}
			got, want := ratio(wrong, n), wl.errorRate(int(s))
			if se := math.Sqrt(want * (1 - want) / n); math.Abs(got-want) > 4*se {
				t.Errorf("%s session %d: error rate %.4f, want %.4f ± %.4f", wl.name, s, got, want, 4*se)
			}
		}
	}
	het := workloads[0]
	if lo, hi := het.errorRate(1), het.errorRate(panelSize); math.Abs(lo-0.06) > 1e-9 || math.Abs(hi-0.25) > 1e-9 {
		t.Errorf("heterogeneous panel errs %v to %v, want 0.06 to 0.25", lo, hi)
	}
	if e := workloads[1].errorRate(3); math.Abs(e-0.02) > 1e-9 {
		t.Errorf("easy panel errs %v, want 0.02", e)
	}
}

func TestWilson(t *testing.T) {
	t.Parallel()
	// Worked by hand from the Wilson score formula with z = 1.96.
	for _, tt := range []struct {
		k, n   int
		lo, hi float64
	}{{5, 10, 0.2366, 0.7634}, {0, 10, 0, 0.2775}, {95, 100, 0.8882, 0.9785}} {
		lo, hi := wilson(tt.k, tt.n)
		if math.Abs(lo-tt.lo) > 5e-5 || math.Abs(hi-tt.hi) > 5e-5 {
			t.Errorf("wilson(%d, %d) = %.4f–%.4f, want %.4f–%.4f", tt.k, tt.n, lo, hi, tt.lo, tt.hi)
		}
	}
}

func TestCalibration(t *testing.T) {
	t.Parallel()
	// Bin 0.9 holds four calls stating 0.95, three right: |3.8 - 3| = 0.8;
	// bin 0.6 two stating 0.6, both right: |1.2 - 2| = 0.8; ECE = 1.6 / 6.
	// A RETRY counts in accuracy, not in calibration.
	calls := []call{
		{correct: true, answered: true, confidence: 0.95}, {correct: true, answered: true, confidence: 0.95},
		{correct: true, answered: true, confidence: 0.95}, {answered: true, confidence: 0.95},
		{correct: true, answered: true, confidence: 0.6}, {correct: true, answered: true, confidence: 0.6},
		{status: trust.StatusRetry, confidence: 0.9},
	}
	s := summarize(calls, nil)
	if got, want := s.ece(), 1.6/6; math.Abs(got-want) > 1e-12 {
		t.Errorf("ECE = %v, want %v", got, want)
	}
	if got, want := s.meanBrier(), (3*0.05*0.05+0.95*0.95+2*0.4*0.4)/6; math.Abs(got-want) > 1e-12 {
		t.Errorf("Brier = %v, want %v", got, want)
	}
	if got, want := s.accuracy(), 5.0/7; got != want {
		t.Errorf("accuracy = %v, want %v", got, want)
	}
	if s.increasing(1) {
		t.Errorf("observed accuracy falls from 100%% (bin 0.6) to 75%% (bin 0.9), but increasing says it rises")
	}
	if !s.increasing(3) {
		t.Errorf("with bins of 3 calls or more only bin 0.9 counts, but increasing says it falls")
	}
}

func TestRun_writesTablesAndCharts(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	md := filepath.Join(dir, "acc.md")
	cfg := config{calls: 30, seed: 1, episode: 30, curve: []int{0, 10}, sweep: []float64{0.7}}
	if err := run(context.Background(), cfg, md, dir, io.Discard, io.Discard); err != nil {
		t.Fatal(err)
	}
	table, err := os.ReadFile(md)
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"-calls 30 -seed 1 -episode 30 -curve 0,10 -outcomes 0 -sweep 0.7`", "### Targets", "### Trap claims", "| traps | 0.7 | on |",
		"| majority of 5 (reference) | — |", "adaptive at most 2.35 runs per call", "adaptive at most 2.1 runs per call",
		"calls 11–30: accuracy"}
	for _, wl := range workloads {
		want = append(want, "### "+wl.title)
	}
	for _, pol := range tiers {
		want = append(want, fmt.Sprintf("| %s | off |", pol))
	}
	for _, w := range want {
		if !bytes.Contains(table, []byte(w)) {
			t.Errorf("the tables lack %q:\n%s", w, table)
		}
	}
	// Fast on an engine shared with adaptive is measured with reputation
	// on only.
	if bytes.Contains(table, []byte("| "+sharedName+" | off |")) {
		t.Errorf("the tables show %s with reputation off, which is not measured", sharedName)
	}
	for _, wl := range workloads {
		chart, err := os.ReadFile(filepath.Join(dir, "reliability-"+wl.name+".svg"))
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Contains(chart, []byte("<svg")) || !bytes.Contains(chart, []byte("reputation off")) {
			t.Errorf("the chart of %s is not an SVG with its title: %.200s", wl.name, chart)
		}
	}
}

func TestParseFlags(t *testing.T) {
	t.Parallel()
	if got, err := parseCurve("0, 100,1000"); err != nil || !cmp.Equal(got, []int{0, 100, 1000}) {
		t.Errorf("parseCurve = %v, %v; want [0 100 1000]", got, err)
	}
	for _, bad := range []string{"100", "0,0", "0,x", "0,-1", ""} {
		if _, err := parseCurve(bad); err == nil || !strings.Contains(err.Error(), "-curve") {
			t.Errorf("parseCurve(%q) error = %v, want one naming -curve", bad, err)
		}
	}
	if got, err := parseOnly("easy,traps"); err != nil || !cmp.Equal(got, []string{"easy", "traps"}) {
		t.Errorf("parseOnly = %v, %v", got, err)
	}
	if got, err := parseOnly("mmlu-strong,emotion"); err != nil || !cmp.Equal(got, []string{"mmlu-strong", "emotion"}) {
		t.Errorf("parseOnly = %v, %v", got, err)
	}
	if got, err := parseOutcomes(" 0, 0.02,,0.05"); err != nil || !cmp.Equal(got, []float64{0, 0.02, 0.05}) {
		t.Errorf("parseOutcomes = %v, %v; want [0 0.02 0.05]", got, err)
	}
	for _, bad := range []string{"1", "-0.1", "x", "NaN", "0,0"} {
		if _, err := parseOutcomes(bad); err == nil || !strings.Contains(err.Error(), "-outcomes") {
			t.Errorf("parseOutcomes(%q) error = %v, want one naming -outcomes", bad, err)
		}
	}
	if _, err := parseOnly("hard"); err == nil || !strings.Contains(err.Error(), "-only") {
		t.Errorf("parseOnly(hard) error = %v, want one naming -only", err)
	}
	if got, err := parseSweep(" 0.9, 0.5,,1"); err != nil || !cmp.Equal(got, []float64{0.9, 0.5, 1}) {
		t.Errorf("parseSweep = %v, %v; want [0.9 0.5 1]", got, err)
	}
	for _, bad := range []string{"0", "1.5", "-0.1", "x", "NaN"} {
		if _, err := parseSweep(bad); err == nil || !strings.Contains(err.Error(), "-sweep") {
			t.Errorf("parseSweep(%q) error = %v, want one naming -sweep", bad, err)
		}
	}
	if _, err := simulate(context.Background(), config{calls: 10, seed: 1, episode: 10, curve: []int{0, 10}}, io.Discard); err == nil {
		t.Errorf("a curve reaching the episode's length was accepted")
	}
}

// TestWeightedStep runs version 3 calls of five replicas weighted by
// reputation through the panel: the panel's plan of the early quorum
// (with the Decided of consensus.Weighted over the book's reliabilities)
// must match the engine's replicas, and the book, which learns
// reliabilities from reported outcomes only, must hold sessions 1 (6%
// error), 3 (10%) and 5 (25%) alike after the calls alone.
func TestWeightedStep(t *testing.T) {
	t.Parallel()
	const n = 300
	wl := &workloads[0]
	p := newPanel(simulated{5, wl, wl.claims(5, 0, n)}, 0, n)
	engine, _, err := newEngine(p, on, reputation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	p.learns = false // run a step again, rather than keep it, when the plan misses: a plan that always misses ends in a fault
	s := stepper{Engine: engine, p: p}
	for i := range n {
		resp, err := s.ValidateV3(context.Background(), &router.ValidateV3Request{
			ValidateTask: router.ValidateTask{Claim: router.Claim{Type: "classification", Output: []byte(`{"claim":` + strconv.Itoa(i) + `}`)}},
			Consensus: router.ConsensusRequest{Replicas: 5, SessionPool: []router.SessionID{1, 2, 3, 4, 5},
				Aggregation: router.AggregationWeighted, DisagreementPolicy: router.DisagreeBestEffort},
		})
		if err != nil {
			t.Fatalf("claim %d: %v", i, err)
		}
		if err := p.err(); err != nil {
			t.Fatalf("claim %d: %v", i, err)
		}
		if resp.Consensus.Strategy != router.AggregationWeighted {
			t.Fatalf("claim %d: aggregation %q, want weighted", i, resp.Consensus.Strategy)
		}
	}
	if replays, _ := p.reordered(); replays > n/10 {
		t.Errorf("%d of %d steps ran again: the plan misses the engine's early quorum", replays, n)
	}
	rel, err := engine.Reputation().Reliabilities(context.Background(), router.Scope(router.KindValidate, "classification"), []int64{1, 3, 5})
	if err != nil {
		t.Fatal(err)
	}
	if r1, r3, r5 := rel.Of(1), rel.Of(3), rel.Of(5); r1 != r3 || r3 != r5 {
		t.Errorf("after %d calls and no outcome the book holds reliabilities %.3f, %.3f, %.3f for sessions 1, 3, 5; want them alike", n, r1, r3, r5)
	}
}

// TestPhi: the correlation of two series of events, by hand: shared
// events give 1, opposite ones −1, a 2×2 table of 2, 1, 1, 4 gives
// (2·4 − 1·1)/√(3·5·3·5) = 7/15, and an event that never happens 0.
func TestPhi(t *testing.T) {
	t.Parallel()
	b := func(s string) []bool {
		out := make([]bool, len(s))
		for i, c := range s {
			out[i] = c == '1'
		}
		return out
	}
	tests := []struct {
		x, y string
		want float64
	}{
		{"1100", "1100", 1},
		{"1100", "0011", -1},
		{"11100000", "11010000", 7.0 / 15},
		{"0000", "1010", 0},
		{"", "", 0},
	}
	for _, tt := range tests {
		if got := phi(b(tt.x), b(tt.y)); math.Abs(got-tt.want) > 1e-12 {
			t.Errorf("phi(%s, %s) = %v, want %v", tt.x, tt.y, got, tt.want)
		}
	}
}
