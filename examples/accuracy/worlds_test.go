package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// cut is the folder of rows cut from the real data
// (testdata/real-llm-cut/README.md).
const cut = "testdata/real-llm-cut"

func TestECEFloor(t *testing.T) {
	t.Parallel()
	calibrated := func(n int) []call {
		calls := make([]call, n)
		for i := range calls {
			p := 0.55 + 0.4*float64(i%10)/10
			calls[i] = call{answered: true, confidence: p, correct: uniform(99, uint64(i)) < p}
		}
		return calls
	}
	small, large := eceFloor(1, calibrated(200), func(int) bool { return true }), eceFloor(1, calibrated(5000), func(int) bool { return true })
	if !(large < small && large < 0.03 && small > 0.03) {
		t.Errorf("a calibrated tier's ECE bound: %.3f on 200 calls, %.3f on 5,000; want it to shrink with the calls, across 0.03", small, large)
	}
	sure := []call{{answered: true, confidence: 1, correct: true}, {answered: true, confidence: 1, correct: true}}
	if f := eceFloor(1, sure, func(int) bool { return true }); f != 0 {
		t.Errorf("calls stating 1: bound %v, want 0", f)
	}
	if f := eceFloor(1, calibrated(100), func(int) bool { return false }); f != 0 {
		t.Errorf("no call kept: bound %v, want 0", f)
	}
}

// worldsCfg is the tests' run of the world families: one seed, one
// panel, on the first 40 calls of the cut rows, outcomes reported for
// none and 5%.
var worldsCfg = config{data: cut, realWarm: 2000, outcomes: []float64{0, 0.05}, seeds: []uint64{3}, panels: 1, realCalls: 40}

var (
	worldsOnce sync.Once
	worldsRep  *worldsReport
	worldsErr  error
)

// smallWorlds measures every family on the cut rows, once for every
// test.
func smallWorlds(t *testing.T) *worldsReport {
	t.Helper()
	worldsOnce.Do(func() {
		cfg := worldsCfg
		cfg.families, _ = parseFamilies("all")
		worldsRep, worldsErr = simulateWorlds(context.Background(), cfg, io.Discard)
	})
	if worldsErr != nil {
		t.Fatal(worldsErr)
	}
	return worldsRep
}

func TestSimulateWorlds(t *testing.T) {
	t.Parallel()
	rep := smallWorlds(t)
	for _, f := range families {
		rs := rep.results[f.name]
		if len(rs) != 1 {
			t.Fatalf("%s: %d worlds, want 1", f.name, len(rs))
		}
		r := rs[0]
		if r.w.warm != r.w.n/2 || r.w.n < 24 {
			t.Errorf("%s: %d calls, %d earlier: want half the calls earlier when there are fewer than 4,000", f.name, r.w.n, r.w.warm)
		}
		for _, pol := range tiers {
			for _, st := range worldsCfg.settings() {
				s := r.cells[worldCell{pol, st}]
				if s.calls != r.w.n-r.w.warm {
					t.Errorf("%s %s %s: %d measured calls, want %d", f.name, pol, st, s.calls, r.w.n-r.w.warm)
				}
				if s.answered > 0 && r.floors[worldCell{pol, st}] <= 0 {
					t.Errorf("%s %s %s: no calibrated tier's ECE", f.name, pol, st)
				}
			}
		}
		if oracle := r.cells[worldCell{trust.PolicyOracle, setting{rep: off}}]; oracle.runsPerCall() != panelSize {
			t.Errorf("%s: oracle ran %.2f runs per call, want %d", f.name, oracle.runsPerCall(), panelSize)
		}
		if r.five.calls != r.w.n-r.w.warm || !slices.Contains(r.w.models[:], r.bestModel) {
			t.Errorf("%s: references on %d calls, best %q: want the measured calls and a panel model", f.name, r.five.calls, r.bestModel)
		}
		if got := len(r.targets(worldsCfg)); got < 5 {
			t.Errorf("%s: %d targets", f.name, got)
		}
	}
}

func TestSimulateWorlds_deterministic(t *testing.T) {
	t.Parallel()
	cfg := worldsCfg
	cfg.families, _ = parseFamilies("judgebench")
	a, err := simulateWorlds(context.Background(), cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	want := smallWorlds(t).results["judgebench"][0]
	got := a.results["judgebench"][0]
	if diff := cmp.Diff(want.cells, got.cells, cmp.AllowUnexported(stats{}, bin{}, setting{})); diff != "" {
		t.Errorf("the same world twice (-first +second):\n%s", diff)
	}
}

func TestRun_worlds(t *testing.T) {
	t.Parallel()
	rep := smallWorlds(t)
	var md bytes.Buffer
	rep.markdown(&md)
	out := md.String()
	for _, want := range []string{"| family | target | worst | median | met on | |", "### lookalike:", "### gsm8k-mid:", "plurality of 5 (reference)",
		"-families lookalike,llmbar,judgebench,mmlu-strong,mmlu-mid,gsm8k-small,gsm8k-mid -seeds 3 -panels 1", "What votes cannot see"} {
		if !strings.Contains(out, want) {
			t.Errorf("the report lacks %q", want)
		}
	}
	for _, f := range families {
		var svg bytes.Buffer
		if err := rep.chart(&svg, &f); err != nil || !strings.Contains(svg.String(), "<svg") {
			t.Errorf("%s: chart: %v", f.name, err)
		}
	}
}

func TestRun_worldsFallBackToFixtures(t *testing.T) {
	t.Parallel()
	cfg := worldsCfg
	cfg.data = ""
	cfg.families, _ = parseFamilies("gsm8k-small")
	var out, progress bytes.Buffer
	if err := run(context.Background(), cfg, "", "", &out, &progress); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(progress.String(), "the worlds run on the committed fixtures") || !strings.Contains(out.String(), "these figures come from the committed fixtures") {
		t.Errorf("no word of the fixtures:\n%s\n%s", progress.String(), out.String())
	}
	if !strings.Contains(out.String(), "### gsm8k-small:") {
		t.Errorf("no table of the family:\n%s", out.String())
	}
}

// TestRun_dataAbsent: a -data folder that is absent, or a file, is an
// error naming the flag and the path, on the world families and on the
// workloads alike; only an empty -data runs on the fixtures.
func TestRun_dataAbsent(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	if err := os.WriteFile(file, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	families, _ := parseFamilies("gsm8k-small")
	for _, tc := range []struct {
		name     string
		data     string
		families []*family
		want     string
		hint     bool // the error names the fixtures
	}{
		{"families, absent", filepath.Join(dir, "absent"), families, "no such file or directory", true},
		{"families, a file", file, families, "is not a folder", false},
		{"workloads, absent", filepath.Join(dir, "absent"), nil, "no such file or directory", false},
	} {
		cfg := worldsCfg
		cfg.data, cfg.families = tc.data, tc.families
		var out, progress bytes.Buffer
		err := run(context.Background(), cfg, "", "", &out, &progress)
		if err == nil || !strings.HasPrefix(err.Error(), "-data: ") || !strings.Contains(err.Error(), tc.data) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: error %v, want one naming -data, %s and %q", tc.name, err, tc.data, tc.want)
		}
		if err != nil && strings.Contains(err.Error(), "committed fixtures") != tc.hint {
			t.Errorf("%s: error %v: want the fixtures named %v", tc.name, err, tc.hint)
		}
		if out.Len() > 0 || progress.Len() > 0 {
			t.Errorf("%s: wrote %q and %q before the error", tc.name, out.String(), progress.String())
		}
	}
}

func TestParseFamilies(t *testing.T) {
	t.Parallel()
	fs, err := parseFamilies("llmbar, gsm8k-mid")
	if err != nil || len(fs) != 2 || fs[0].name != "llmbar" || fs[1].name != "gsm8k-mid" {
		t.Errorf("parseFamilies: %v, %v", fs, err)
	}
	if _, err := parseFamilies("emotion"); err == nil || !strings.Contains(err.Error(), `-families: no family "emotion"`) {
		t.Errorf("an unknown family: %v", err)
	}
	if _, err := parseSeeds("1,1"); err == nil || !strings.Contains(err.Error(), "-seeds") {
		t.Errorf("a seed twice: %v", err)
	}
	cfg := worldsCfg
	cfg.families, cfg.panels = []*family{&families[0]}, 0
	if err := cfg.check(); err == nil || !strings.Contains(err.Error(), "-panels 0") {
		t.Errorf("no panel: %v", err)
	}
}

func TestOutcomeGapAndRetries(t *testing.T) {
	t.Parallel()
	i := slices.IndexFunc(families, func(f family) bool { return f.delegates() })
	f := &families[i]
	w := &world{fam: f, warm: 4, n: 8}
	r := &worldResult{w: w, cells: map[worldCell]stats{}, floors: map[worldCell]float64{}, together: map[worldCell]stats{},
		outcomes: map[worldCell]stats{}, retries: map[worldCell]retries{}, endings: map[worldCell]map[string]endingTally{}, fiveWrong: make([]bool, 8)}
	cfg := config{outcomes: []float64{0.05}}
	bind := cfg.binding()
	// fast: its two reported calls (earlier ones) were right, its
	// measured calls half right. safe: both sides all right.
	fast := make([]call, 8)
	safe := make([]call, 8)
	for i := range fast {
		fast[i] = call{status: trust.StatusValid, answered: true, confidence: 0.7, correct: i < 4 || i%2 == 0, reported: i < 2}
		safe[i] = call{status: trust.StatusValid, answered: true, confidence: 0.9, correct: true, reported: i == 5}
	}
	// adaptive: two RETRYs among its measured calls, one carrying the
	// right answer, and no gap.
	adaptive := slices.Clone(safe)
	adaptive[6] = call{status: trust.StatusRetry, retryRight: true}
	adaptive[7] = call{status: trust.StatusRetry}
	r.keep(worldCell{trust.PolicyFast, bind}, fast)
	r.keep(worldCell{trust.PolicySafe, bind}, safe)
	r.keep(worldCell{trust.PolicyAdaptive, bind}, adaptive)
	rep := &worldsReport{cfg: cfg, results: map[string][]*worldResult{f.name: {r}}}

	worst, median, ok := rep.outcomeGap(f)
	if !ok || worst != "+50.0 points (fast)" || median != 50 {
		t.Errorf("outcomeGap = %q, %v, %v; want +50.0 points (fast), 50, true", worst, median, ok)
	}
	worstR, medianR, ok := rep.retried(f)
	if want := "50.0% of the calls, 50.0% right"; !ok || worstR != want || medianR != want {
		t.Errorf("retried = %q, %q, %v; want %q twice", worstR, medianR, ok, want)
	}
	v := &families[slices.IndexFunc(families, func(f family) bool { return !f.delegates() })]
	rep.results[v.name] = []*worldResult{r}
	if _, _, ok := rep.retried(v); ok {
		t.Errorf("retried reports a validation family")
	}
	delete(r.outcomes, worldCell{trust.PolicyFast, bind})
	r.outcomes[worldCell{trust.PolicySafe, bind}] = stats{}
	r.outcomes[worldCell{trust.PolicyAdaptive, bind}] = stats{}
	if _, _, ok := rep.outcomeGap(f); ok {
		t.Errorf("outcomeGap reports a gap with no outcome reported")
	}
}

// movedCells compares the cells of after with those of before, the same
// world measured otherwise: it reports every cell with reputation off
// whose figures moved (an option that only reputation reads must leave
// them), and returns how many cells have reputation off and how many
// with reputation on moved.
func movedCells(t *testing.T, before, after *worldResult) (offs, moved int) {
	t.Helper()
	for c, s := range after.cells {
		diff := cmp.Diff(before.cells[c], s, cmp.AllowUnexported(stats{}, bin{}))
		switch {
		case c.st.rep == off:
			offs++
			if diff != "" {
				t.Errorf("%v, reputation off (-before +after):\n%s", c, diff)
			}
		case diff != "":
			moved++
		}
	}
	return offs, moved
}

// TestSimulateWorlds_selectionShift checks that -selection-shift leaves
// reputation off as it is (it orders no session) and names itself on the
// command line, and that the configuration refuses a bad one.
func TestSimulateWorlds_selectionShift(t *testing.T) {
	t.Parallel()
	cfg := worldsCfg
	cfg.families, _ = parseFamilies("llmbar")
	cfg.shift = 7
	got, err := simulateWorlds(context.Background(), cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if offs, _ := movedCells(t, smallWorlds(t).results["llmbar"][0], got.results["llmbar"][0]); offs == 0 {
		t.Fatal("no cell with reputation off")
	}
	if cmd := got.command(); !strings.Contains(cmd, "-selection-shift 7") {
		t.Errorf("the command line lacks -selection-shift 7: %s", cmd)
	}
	for _, c := range []struct {
		cfg  config
		want string
	}{
		{config{families: cfg.families, seeds: []uint64{1}, panels: 1, shift: -1}, "-selection-shift must be at least 0"},
		{config{shift: 2}, "-selection-shift: the selection draws are shifted on the world families"},
	} {
		if err := c.cfg.check(); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: error %v, want one saying %q", c.cfg, err, c.want)
		}
	}
}

// TestWorld_drift checks that drift swaps the answers of the sessions
// right most and least often on the measured calls, on the measured calls
// only.
func TestWorld_drift(t *testing.T) {
	t.Parallel()
	V, I := answer{verdict: router.VerdictValid}, answer{verdict: router.VerdictInvalid}
	// Truth VALID on every call: on calls 2 and 3 (measured) session 2 is
	// right twice, session 4 never; the others once.
	answers := [][panelSize]answer{
		{V, V, I, I, V}, // earlier calls: left alone
		{I, V, V, I, V},
		{V, V, I, I, I},
		{I, V, V, I, V},
	}
	w := &world{claims: &table{truths: make([]router.Verdict, 4), answers: slices.Clone(answers)}, warm: 2, n: 4}
	for i := range w.claims.truths {
		w.claims.truths[i] = router.VerdictValid
	}
	w.drift()
	want := [][panelSize]answer{
		answers[0],
		answers[1],
		{V, I, I, V, I},
		{I, I, V, V, V},
	}
	if diff := cmp.Diff(want, w.claims.answers, cmp.AllowUnexported(answer{})); diff != "" {
		t.Errorf("answers after drift (-want +got):\n%s", diff)
	}
	if w.swapped != [2]router.SessionID{2, 4} {
		t.Errorf("swapped %v, want sessions 2 and 4", w.swapped)
	}
}

// TestSimulateWorlds_forget checks that with -drift, -forget moves the
// figures with reputation on (the host forgets the swapped sessions) and
// none with reputation off, and names itself on the command line.
func TestSimulateWorlds_forget(t *testing.T) {
	t.Parallel()
	cfg := worldsCfg
	cfg.families, _ = parseFamilies("llmbar")
	cfg.drift = true
	drifted, err := simulateWorlds(context.Background(), cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cfg.forget = true
	forgot, err := simulateWorlds(context.Background(), cfg, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if _, moved := movedCells(t, drifted.results["llmbar"][0], forgot.results["llmbar"][0]); moved == 0 {
		t.Error("forgetting the swapped sessions moved no figure with reputation on")
	}
	if cmd := forgot.command(); !strings.Contains(cmd, "-drift -forget") {
		t.Errorf("the command line lacks -drift -forget: %s", cmd)
	}
}

// TestShortestLeads: the records named as the shortest that lead are
// those reputation.Lead.PValue passes at each level, of the wins asked at
// least, and no shorter; a world's report names those of the margin too,
// unless it is off or the level is 1/2, and names options no book takes.
func TestShortestLeads(t *testing.T) {
	for _, tc := range []struct {
		level  float64
		minWon int
		want   string
	}{
		{reputation.DefaultLeadLevel, 1, "three in three, five in six or seven in nine"},
		{1.0 / 16, 1, "four in four, six in seven or eight in ten"},
		{reputation.MaxLeadLevel, 1, "one in one, two in three or three in five"},
		{reputation.MaxLeadLevel, 2, "two in two, two in three or three in five"},
	} {
		if got := shortestLeads(tc.level, tc.minWon); got != tc.want {
			t.Errorf("shortestLeads(%v, %d) = %q, want %q", tc.level, tc.minWon, got, tc.want)
		}
	}
	for _, tc := range []struct {
		book reputation.Options
		want string
	}{
		{reputation.Options{}, "three in three, five in six or seven in nine; a session 0.05 or more above every other, two in two, two in three or three in five"},
		{reputation.Options{LeadMargin: 1}, "three in three, five in six or seven in nine"},
		{reputation.Options{LeadLevel: 0.5}, "one in one, two in three or three in five"},
		{reputation.Options{LeadMargin: 2}, "none: no book takes these options (reputation: invalid"},
	} {
		if got := (config{book: tc.book}).leads(); !strings.HasPrefix(got, tc.want) {
			t.Errorf("leads with %+v = %q, want %q", tc.book, got, tc.want)
		}
	}
}

// TestRun_worldsNoOutcomeNotRun: a world's row names the no-outcome
// figure it did not measure (-outcomes without 0) as not run, not as an
// accuracy of 0.
func TestRun_worldsNoOutcomeNotRun(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		outcomes []float64
		want     string
	}{{[]float64{0.05}, "not run"}, {[]float64{0, 0.05}, "%"}} {
		cfg := worldsCfg
		cfg.outcomes = tc.outcomes
		cfg.families, _ = parseFamilies("llmbar")
		rep, err := simulateWorlds(context.Background(), cfg, io.Discard)
		if err != nil {
			t.Fatal(err)
		}
		var md bytes.Buffer
		rep.markdown(&md)
		row := ""
		for line := range strings.Lines(md.String()) {
			if strings.HasPrefix(line, "| 3 | 0 | ") {
				row = line
			}
		}
		cells := strings.Split(row, " | ")
		if len(cells) != 8 || !strings.HasSuffix(cells[5], tc.want) {
			t.Errorf("-outcomes %v: the world's row %q, want its no-outcome cell to end in %q", tc.outcomes, row, tc.want)
		}
	}
}
