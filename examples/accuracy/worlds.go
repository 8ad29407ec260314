package main

import (
	"context"
	"embed"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
	"sync"
	"time"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// cutRows are a few dozen rows cut from each real-data file, the
// worlds' data when -data is empty
// (testdata/real-llm-cut/README.md says which rows and under which
// licence).
//
//go:embed testdata/real-llm-cut
var cutRows embed.FS

// A world is one panel of a family drawn by a seed, with the family's
// data loaded: the calls in the seed's order, the first warm of them
// the earlier calls and the rest measured.
type world struct {
	fam    *family
	seed   uint64
	panel  int
	models [panelSize]string
	claims *table    // a validation world's claims
	probs  *problems // a delegation world's problems
	warm   int
	n      int // the calls of the world, earlier and measured
	// swapped are the two sessions drift swapped; zero when none.
	swapped [2]router.SessionID
}

// name is the world's name: its family, seed and panel.
func (w *world) name() string { return fmt.Sprintf("%s/seed %d/panel %d", w.fam.name, w.seed, w.panel) }

// measuredCall reports whether call i is a measured one.
func (w *world) measuredCall(i int) bool { return i >= w.warm && i < w.n }

// drift swaps, from w's first measured call on, the answers of its best
// and worst sessions, those right most and least often on the measured
// calls (the lower id of equals): the panel changes as measuring begins,
// and reputation, learned on the earlier calls, has to follow. The
// references are unchanged, as the same answers stay in the panel; the
// models a world's row names are those of its earlier calls. A
// delegation world is left as it is.
func (w *world) drift() {
	if w.claims == nil {
		return
	}
	t := w.claims
	var right [panelSize]int
	for i := w.warm; i < w.n; i++ {
		for s, a := range t.answers[i] {
			if !a.failed && a.verdict == t.truths[i] {
				right[s]++
			}
		}
	}
	best, worst := 0, 0
	for s, n := range right {
		if n > right[best] {
			best = s
		}
		if n < right[worst] {
			worst = s
		}
	}
	for i := w.warm; i < w.n; i++ {
		a := &t.answers[i]
		a[best], a[worst] = a[worst], a[best]
	}
	w.swapped = [2]router.SessionID{router.SessionID(best + 1), router.SessionID(worst + 1)}
}

// worldWarm is the earlier calls of a world of n calls: warm (the -warm
// flag, 2,000 by default) when the data allows, else half the calls.
func worldWarm(warm, n int) int { return min(warm, n/2) }

// loadWorld loads the data of family f for panel p of seed from dir;
// limit, when above 0, caps the world's calls.
func loadWorld(dir string, f *family, seed uint64, p, warm, limit int) (*world, error) {
	w := &world{fam: f, seed: seed, panel: p, models: f.draw(seed, p)}
	if f.delegates() {
		spec := &delegationSpec{name: w.name(), title: f.title, models: w.models, runsTarget: f.runsTarget}
		t, err := loadProblems(dir, spec, seed)
		if err != nil {
			return nil, err
		}
		t.truncate(limit)
		w.probs, w.n = t, t.len()
	} else {
		spec := &panelSpec{name: w.name(), title: f.title, kind: f.kind, models: w.models, runsTarget: f.runsTarget}
		t, err := loadTable(dir, spec, seed)
		if err != nil {
			return nil, err
		}
		t.truncate(limit)
		w.claims, w.n = t, t.len()
	}
	w.warm = worldWarm(warm, w.n)
	return w, nil
}

// worldCell is one cell of a world: a tier at a setting.
type worldCell struct {
	policy trust.Policy
	st     setting
}

// worldResult is what a world measured: each cell's stats over the
// measured calls, the ECE a perfectly calibrated tier would show on the
// same calls, each cell's stats on the calls a majority (plurality) of
// the five got wrong, and the references.
type worldResult struct {
	w         *world
	cells     map[worldCell]stats
	floors    map[worldCell]float64
	together  map[worldCell]stats                  // on the calls the majority (plurality) of 5 got wrong
	outcomes  map[worldCell]stats                  // on the calls whose outcome the host reported, earlier and measured
	retries   map[worldCell]retries                // a delegation's RETRY answers on the measured calls
	endings   map[worldCell]map[string]endingTally // how adaptive's delegations ended (tallyEndings)
	five      stats                                // the majority (plurality) of 5
	fiveWrong []bool                               // by call: the majority (plurality) of 5 was wrong
	bestRight []bool                               // by call: the best single session was right
	best      stats                                // the session right most often on the measured calls
	bestModel string
	followed  stats    // following the reports at the binding share, call by call (followReports)
	chosen    stats    // the same, the rule chosen in hindsight
	against   dissent  // a validation's best single session against the others' majority (againstOthers)
	oracle    weighing // a validation's majority of 5 weighed one way and two ways at the rates of every call
	byReports weighing // the same at the rates of the calls reported at the binding share
}

// worldsReport is every world measured, by family in the order run.
type worldsReport struct {
	cfg      config
	fixtures bool // the worlds ran on the committed fixtures
	results  map[string][]*worldResult
	order    []*family
	elapsed  time.Duration
}

// simulateWorlds measures every world of cfg's families: for each seed
// and each of cfg.panels panels, every tier at every setting, each cell
// an episode on a fresh engine. Cells run concurrently; each keeps only
// its summary.
func simulateWorlds(ctx context.Context, cfg config, progress io.Writer) (*worldsReport, error) {
	began := time.Now()
	rep := &worldsReport{cfg: cfg, results: map[string][]*worldResult{}, order: cfg.families}
	dir := cfg.data
	if dir == "" {
		tmp, err := os.MkdirTemp("", "accuracy-fixtures-")
		if err != nil {
			return nil, err
		}
		defer os.RemoveAll(tmp)
		sub, err := fs.Sub(cutRows, "testdata/real-llm-cut")
		if err == nil {
			err = os.CopyFS(tmp, sub)
		}
		if err != nil {
			return nil, fmt.Errorf("copying the fixtures: %w", err)
		}
		fmt.Fprintln(progress, "accuracy: no -data folder: the worlds run on the committed fixtures, a few dozen rows of each file")
		dir, rep.fixtures = tmp, true
	}
	type job struct {
		r *worldResult
		c worldCell
	}
	var jobs []job
	for _, f := range cfg.families {
		for _, seed := range cfg.seeds {
			for p := range cfg.panels {
				w, err := loadWorld(dir, f, seed, p, cfg.realWarm, cfg.realCalls)
				if err != nil {
					return nil, err
				}
				if cfg.drift {
					w.drift()
				}
				r, err := newWorldResult(w, cfg.binding())
				if err != nil {
					return nil, err
				}
				rep.results[f.name] = append(rep.results[f.name], r)
				for _, pol := range tiers {
					for _, st := range cfg.settings() {
						jobs = append(jobs, job{r, worldCell{pol, st}})
					}
				}
			}
		}
	}
	slices.SortStableFunc(jobs, func(a, b job) int { return b.r.w.n - a.r.w.n })
	var mu sync.Mutex
	measureCell := func(ctx context.Context, j job) ([]call, int, int, error) {
		w := j.r.w
		c := cell{workload: w.name(), policy: j.c.policy, rep: j.c.st.rep, outcomes: j.c.st.outcomes, shift: cfg.shift, book: cfg.book}
		if cfg.forget {
			c.forget, c.forgetAt = w.swapped, w.warm
		}
		var calls []call
		var replays, offPlan int
		var err error
		if w.probs != nil {
			calls, replays, offPlan, err = measureDelegation(ctx, w.seed, c, plurality, w.probs)
		} else {
			calls, replays, offPlan, err = measure(ctx, w.seed, c, w.claims, 0, w.n)
		}
		if err != nil {
			return nil, 0, 0, fmt.Errorf("%s: %w", c, err)
		}
		mu.Lock()
		defer mu.Unlock()
		j.r.keep(j.c, calls)
		return nil, replays, offPlan, nil
	}
	if _, _, err := runEpisodes(ctx, jobs, measureCell, func(job, []call) {}, progress, "world cells", 20, began); err != nil {
		return nil, err
	}
	rep.elapsed = time.Since(began)
	return rep, nil
}

// newWorldResult computes a world's references: the majority (for a
// delegation, the plurality) of 5 and the best single session on the
// measured calls; what following the outcomes reported at bind would
// answer (followReports); and for a validation, the best session's record
// against the others' majority (againstOthers) and the majority of 5
// weighed one way and two ways (weighedMajority).
func newWorldResult(w *world, bind setting) (*worldResult, error) {
	r := &worldResult{w: w, cells: map[worldCell]stats{}, floors: map[worldCell]float64{}, together: map[worldCell]stats{}, outcomes: map[worldCell]stats{}, retries: map[worldCell]retries{}, endings: map[worldCell]map[string]endingTally{}}
	var five []call
	var single [panelSize][]call
	var err error
	if w.probs != nil {
		five, err = ofFive(w.probs, consensus.Majority{})
		for s := range single {
			single[s] = byModel(w.probs, router.SessionID(s+1))
		}
	} else {
		five, err = majorityOfFive(w.claims, w.n)
		for s := range single {
			single[s] = alone(w.claims, w.n, router.SessionID(s+1))
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", w.name(), err)
	}
	r.five = summarize(five, w.measuredCall)
	r.fiveWrong = make([]bool, len(five))
	for i, c := range five {
		r.fiveWrong[i] = !c.correct
	}
	best := 0
	for s := range single {
		if st := summarize(single[s], w.measuredCall); r.bestModel == "" || st.correct > r.best.correct {
			r.best, r.bestModel, best = st, w.models[s], s
		}
	}
	r.bestRight = make([]bool, len(single[best]))
	for i, c := range single[best] {
		r.bestRight[i] = c.correct
	}
	if w.probs == nil {
		r.against = againstOthers(single, best)
		r.oracle = weighed(w, single, func(int) bool { return true })
	}
	if bind.rep == on && bind.outcomes > 0 {
		rules := append([][]call{five}, single[:]...)
		reported := func(i int) bool {
			return reports(w.seed, 0, i, bind.outcomes)
		}
		r.followed = summarize(followReports(rules, reported, false), w.measuredCall)
		r.chosen = summarize(followReports(rules, reported, true), w.measuredCall)
		if w.probs == nil {
			r.byReports = weighed(w, single, reported)
		}
	}
	return r, nil
}

// keep summarizes a cell's calls.
func (r *worldResult) keep(c worldCell, calls []call) {
	w := r.w
	r.cells[c] = summarize(calls, w.measuredCall)
	r.floors[c] = eceFloor(w.seed, calls, w.measuredCall)
	r.together[c] = summarize(calls, func(i int) bool { return w.measuredCall(i) && r.fiveWrong[i] })
	r.outcomes[c] = summarize(calls, func(i int) bool { return calls[i].reported })
	var rt retries
	for i, k := range calls {
		if w.measuredCall(i) && k.status == trust.StatusRetry {
			rt.calls++
			if k.retryRight {
				rt.right++
			}
		}
	}
	r.retries[c] = rt
	if c.policy == trust.PolicyAdaptive {
		r.endings[c] = tallyEndings(calls, w.measuredCall, r.fiveWrong, r.bestRight)
	}
}

// retries counts a delegation's RETRY answers on the measured calls, and
// how many of them carried the right answer as their best-effort result.
type retries struct{ calls, right int }

// floorRuns is how many times eceFloor draws the outcomes.
const floorRuns = 200

// eceFloor returns the ECE a perfectly calibrated tier would show on the
// calls keep accepts, with their stated confidences: each answered call
// right with the probability it states, drawn floorRuns times; the 95th
// percentile of the ECEs drawn, a bound a calibrated tier exceeds one
// time in twenty.
func eceFloor(seed uint64, calls []call, keep func(int) bool) float64 {
	var conf []float64
	for i, c := range calls {
		if keep(i) && c.answered {
			conf = append(conf, c.confidence)
		}
	}
	if len(conf) == 0 {
		return 0
	}
	eces := make([]float64, floorRuns)
	sim := make([]call, len(conf))
	for k := range eces {
		for i, p := range conf {
			sim[i] = call{answered: true, confidence: p, correct: uniform(seed, streamFloor, uint64(k), uint64(i)) < p}
		}
		eces[k] = summarize(sim, nil).ece()
	}
	slices.Sort(eces)
	return eces[floorRuns*95/100-1]
}
