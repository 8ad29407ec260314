package main

import (
	"context"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// A setting is how a cell's engine runs: reputation off or on, and with
// it on, the share of the calls whose true outcome the host reports.
type setting struct {
	rep      variant
	outcomes float64
}

func (s setting) String() string {
	if s.rep == off || s.outcomes == 0 {
		return s.rep.String()
	}
	return fmt.Sprintf("on, %g%% outcomes", 100*s.outcomes)
}

// settings returns the settings measured: reputation off, then on at
// each share of reported outcomes of cfg, in order (none: on with no
// outcome reported).
func (c config) settings() []setting {
	ss := []setting{{rep: off}}
	if len(c.outcomes) == 0 {
		return append(ss, setting{rep: on})
	}
	for _, o := range c.outcomes {
		ss = append(ss, setting{rep: on, outcomes: o})
	}
	return ss
}

// realReport is the real-data validation workloads measured: every
// cell's calls, by claim number in the table's order.
type realReport struct {
	cfg     config
	tables  []*table
	cells   map[cell][]call
	five    map[string][]call            // the majority of 5, by workload
	single  map[string][panelSize][]call // each session alone, by workload
	elapsed time.Duration
	// learned holds, for adaptive's cells with outcomes reported, each
	// session's reliability as the engine's book read it after the
	// episode's last call (index: id - 1).
	learned   map[cell][panelSize]float64
	learnedMu sync.Mutex
	offPlan   int // steps kept although the scheduler reordered them (reputation on)
	replays   int // steps run again because the scheduler reordered them (reputation off)
}

// simulateReal loads the real-data workloads cfg names from cfg.data and
// runs every cell on each: one episode per cell, the table's claims in
// their seeded order, the first cfg.realWarm of them the earlier calls.
// Cells run concurrently.
func simulateReal(ctx context.Context, cfg config, progress io.Writer) (*realReport, error) {
	began := time.Now()
	rep := &realReport{cfg: cfg, cells: map[cell][]call{}, five: map[string][]call{}, single: map[string][panelSize][]call{}, learned: map[cell][panelSize]float64{}}
	type job struct {
		c cell
		t *table
	}
	var jobs []job
	for i := range panelSpecs {
		spec := &panelSpecs[i]
		if !cfg.includes(spec.name) {
			continue
		}
		t, err := loadTable(cfg.data, spec, cfg.seed)
		if err != nil {
			return nil, err
		}
		t.truncate(cfg.realCalls)
		if t.len() <= cfg.realWarm {
			return nil, fmt.Errorf("-warm: %s has %d claims, not more than the %d earlier calls", spec.name, t.len(), cfg.realWarm)
		}
		rep.tables = append(rep.tables, t)
		if rep.five[spec.name], err = majorityOfFive(t, t.len()); err != nil {
			return nil, err
		}
		var single [panelSize][]call
		for s := range single {
			single[s] = alone(t, t.len(), router.SessionID(s+1))
		}
		rep.single[spec.name] = single
		for _, pol := range tiers {
			for _, st := range cfg.settings() {
				cs := []cell{{workload: spec.name, policy: pol, rep: st.rep, outcomes: st.outcomes}}
				if pol == trust.PolicyFast && st.rep == on {
					cs = append(cs, cell{workload: spec.name, policy: pol, rep: on, outcomes: st.outcomes, shared: true})
				}
				if pol != trust.PolicyOracle && st.rep == on && st.outcomes > 0 {
					for d := 1; d <= cfg.draws; d++ {
						cs = append(cs, cell{workload: spec.name, policy: pol, rep: on, outcomes: st.outcomes, draw: d})
					}
				}
				for _, c := range cs {
					jobs = append(jobs, job{c, t})
				}
			}
		}
	}
	// The longest first: the shared cells make two calls per claim.
	slices.SortStableFunc(jobs, func(a, b job) int { return b.t.len()*cost(b.c) - a.t.len()*cost(a.c) })
	measureCell := func(ctx context.Context, j job) ([]call, int, int, error) {
		var then func(*router.Engine) error
		if j.c.policy == trust.PolicyAdaptive && j.c.rep == on && j.c.outcomes > 0 {
			then = func(e *router.Engine) error { return rep.keepLearned(ctx, j.c, e) }
		}
		calls, replays, offPlan, err := measureThen(ctx, cfg.seed, j.c, j.t, 0, j.t.len(), then)
		if err != nil {
			return nil, 0, 0, fmt.Errorf("%s: %w", j.c, err)
		}
		return calls, replays, offPlan, nil
	}
	keep := func(j job, calls []call) { rep.cells[j.c] = calls }
	var err error
	if rep.replays, rep.offPlan, err = runEpisodes(ctx, jobs, measureCell, keep, progress, "real-data cells", 5, began); err != nil {
		return nil, err
	}
	rep.elapsed = time.Since(began)
	return rep, nil
}

// keepLearned records the reliability of each of the panel's sessions
// that e's book reads in the scope of the claims measure validates as
// c's learned ones.
func (r *realReport) keepLearned(ctx context.Context, c cell, e *router.Engine) error {
	ids := make([]int64, panelSize)
	for i := range ids {
		ids[i] = int64(i + 1)
	}
	rel, _, err := e.Reputation().Evidence(ctx, router.Scope(router.KindValidate, claimType), ids)
	if err != nil {
		return fmt.Errorf("%s: reading the learned reliabilities: %w", c, err)
	}
	var learned [panelSize]float64
	for i, id := range ids {
		learned[i] = rel.Of(id)
	}
	r.learnedMu.Lock()
	defer r.learnedMu.Unlock()
	r.learned[c] = learned
	return nil
}

// cost is the trust calls a cell makes per claim.
func cost(c cell) int {
	if c.shared {
		return 2
	}
	return 1
}

// measured returns the stats of the calls after the first cfg.realWarm.
func (r *realReport) measured(calls []call) stats {
	return summarize(calls, func(i int) bool { return i >= r.cfg.realWarm })
}

// wrongTogether returns the measured stats of the calls on claims a
// majority of the panel's five sessions got wrong.
func (r *realReport) wrongTogether(t *table, calls []call) stats {
	return summarize(calls, func(i int) bool { return i >= r.cfg.realWarm && !r.five[t.spec.name][i].correct })
}

// errorsTogether writes, for each pair of the panel's sessions, the
// correlation of their being wrong on the same measured claim (phi): the
// evidence a correlation per pair of sessions would be learned from,
// against the one panel-wide correlation that tempers every call.
func (r *realReport) errorsTogether(w io.Writer, t *table) {
	single := r.single[t.spec.name]
	var wrong [panelSize][]bool
	for s := range single {
		for i, c := range single[s] {
			if i >= r.cfg.realWarm {
				wrong[s] = append(wrong[s], !c.correct)
			}
		}
	}
	fmt.Fprintln(w, "\nErrors together (measured): the correlation (phi) of two sessions' being wrong on the same claim, 0 for independent errors and 1 for errors always shared.")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| session | 1 | 2 | 3 | 4 | 5 |")
	fmt.Fprintln(w, "|---|---:|---:|---:|---:|---:|")
	for a := range wrong {
		fmt.Fprintf(w, "| %d |", a+1)
		for b := range wrong {
			if a == b {
				fmt.Fprint(w, " — |")
				continue
			}
			fmt.Fprintf(w, " %.2f |", phi(wrong[a], wrong[b]))
		}
		fmt.Fprintln(w)
	}
}

// get returns a cell's calls, nil when it was not measured.
func (r *realReport) get(t *table, pol trust.Policy, st setting) []call {
	return r.cells[cell{workload: t.spec.name, policy: pol, rep: st.rep, outcomes: st.outcomes}]
}

// shared returns the calls of fast on an engine shared with adaptive.
func (r *realReport) shared(t *table, st setting) []call {
	return r.cells[cell{workload: t.spec.name, policy: trust.PolicyFast, rep: on, outcomes: st.outcomes, shared: true}]
}

// best returns the session right most often on the measured calls, and
// its calls.
func (r *realReport) best(t *table) (router.SessionID, []call) {
	single := r.single[t.spec.name]
	b := 0
	for s := range single {
		if r.measured(single[s]).correct > r.measured(single[b]).correct {
			b = s
		}
	}
	return router.SessionID(b + 1), single[b]
}

// command returns the command line that reproduces the report.
func (r *realReport) command() string {
	cfg := r.cfg
	s := fmt.Sprintf("go run ./examples/accuracy -data %s -seed %d -warm %d -outcomes %s", cfg.data, cfg.seed, cfg.realWarm, joinFloats(cfg.outcomes))
	var names []string
	for _, t := range r.tables {
		names = append(names, t.spec.name)
	}
	if cfg.draws > 0 {
		s += fmt.Sprintf(" -draws %d", cfg.draws)
	}
	if cfg.realCalls > 0 {
		s += fmt.Sprintf(" -real-calls %d", cfg.realCalls)
	}
	return s + " -only " + strings.Join(names, ",")
}

func joinFloats(fs []float64) string {
	parts := make([]string, len(fs))
	for i, f := range fs {
		parts[i] = fmt.Sprint(f)
	}
	return strings.Join(parts, ",")
}

// markdown writes the real-data tables.
func (r *realReport) markdown(w io.Writer) {
	cfg := r.cfg
	fmt.Fprintf(w, "Generated by `%s`, which took %s on %d cores (GOMAXPROCS).\n", r.command(), r.elapsed.Round(time.Second), runtime.GOMAXPROCS(0))
	fmt.Fprintf(w, "Each tier judges every claim of a workload in one episode on a fresh engine and service, the claims in a seeded order; rows marked *measured* count the calls after the first %d.\n", cfg.realWarm)
	fmt.Fprintf(w, "Steps the scheduler reordered: %d run again (reputation off), %d kept as they ran (reputation on).\n", r.replays, r.offPlan)
	for _, t := range r.tables {
		r.tableTables(w, t)
	}
	r.targetTable(w)
}

// tableTables writes the tables of one real-data workload.
func (r *realReport) tableTables(w io.Writer, t *table) {
	cfg := r.cfg
	valid := 0
	for i := cfg.realWarm; i < t.len(); i++ {
		if t.truths[i] == router.VerdictValid {
			valid++
		}
	}
	measured := t.len() - cfg.realWarm
	fmt.Fprintf(w, "\n### %s\n\n", t.spec.title)
	fmt.Fprintf(w, "%d claims (%d measured after %d earlier calls; dropped: %d disputed gold, %d with a panel model missing, %d with no seller answer); %s of the measured claims are valid. Sellers: %s.\n\n",
		t.len(), measured, cfg.realWarm, t.dropped.disputed, t.dropped.missing, t.dropped.noSeller, pct(ratio(valid, measured)), strings.Join(t.sellers, ", "))
	fmt.Fprintln(w, "| session | model | accuracy as a judge (measured) |")
	fmt.Fprintln(w, "|---|---|---:|")
	for s, m := range t.spec.models {
		fmt.Fprintf(w, "| %d | %s | %s |\n", s+1, m, pct2(r.measured(r.single[t.spec.name][s]).accuracy()))
	}
	r.errorsTogether(w, t)

	fmt.Fprintf(w, "\nMeasured (calls after the first %d):\n\n", cfg.realWarm)
	fmt.Fprintln(w, "| tier | reputation | accuracy | 95% interval | runs per call | most runs | share of runs, sessions 1–5 | answered | ECE | Brier |")
	fmt.Fprintln(w, "|---|---|---:|---|---:|---:|---|---:|---:|---:|")
	for _, pol := range tiers {
		for _, st := range cfg.settings() {
			statsRow(w, string(pol), st.String(), r.measured(r.get(t, pol, st)))
		}
		if pol == trust.PolicyFast {
			for _, st := range cfg.settings()[1:] {
				statsRow(w, sharedName, st.String(), r.measured(r.shared(t, st)))
			}
		}
	}
	b, calls := r.best(t)
	bs := r.measured(calls)
	if t.spec.kind == mmluPro {
		bs.bins = [bins]bin{} // a constant stated confidence: no calibration to read
		bs.brier, bs.answered = 0, 0
	}
	statsRow(w, fmt.Sprintf("best single session (%d, reference)", b), "—", bs)
	statsRow(w, "majority of 5 (reference)", "—", r.measured(r.five[t.spec.name]))
	if t.spec.kind == mmluPro {
		fmt.Fprintf(w, "\nThe best single session's ECE and Brier score are left at 0: MMLU-Pro's models state no confidence, and its sessions report a constant %g.\n", noConfidence)
	}

	wt := r.wrongTogether(t, r.five[t.spec.name])
	fmt.Fprintf(w, "\nWrong together: on %d of the %d measured claims (%s) a majority of the five sessions voted wrong. On them, the mean stated confidence of the calls answered VALID or INVALID against how often they were right:\n\n",
		wt.calls, measured, pct(ratio(wt.calls, measured)))
	fmt.Fprintln(w, "| tier | reputation | answered | stated | observed | over-confidence (points) |")
	fmt.Fprintln(w, "|---|---|---:|---:|---:|---:|")
	overRow := func(name, rep string, s stats) {
		fmt.Fprintf(w, "| %s | %s | %d | %.3f | %s | %+.1f |\n", name, rep, s.answered, s.meanStated(), pct(s.answeredRight()), 100*(s.meanStated()-s.answeredRight()))
	}
	for _, pol := range tiers {
		for _, st := range cfg.settings() {
			overRow(string(pol), st.String(), r.wrongTogether(t, r.get(t, pol, st)))
		}
	}
	overRow("majority of 5 (reference)", "—", wt)

	calibrationTable(w, cfg.settings(), "", func(st setting) stats { return r.measured(r.get(t, trust.PolicyAdaptive, st)) })
	r.learnedTable(w, t)
	r.drawTable(w, t)
}

// chart draws the reliability chart of t: a panel per setting, a line
// per tier, the majority of 5 and (where its model states confidences)
// the best single session.
func (r *realReport) chart(w io.Writer, t *table) error {
	var panels []chartPanel
	for _, st := range r.cfg.settings() {
		cp := chartPanel{title: fmt.Sprintf("%s: reputation %s", t.spec.name, st)}
		for i, pol := range tiers {
			cp.series = append(cp.series, series{string(pol), i, r.measured(r.get(t, pol, st))})
		}
		if st.rep == on {
			cp.series = append(cp.series, series{sharedName, len(tiers) + 1, r.measured(r.shared(t, st))})
		}
		cp.series = append(cp.series, series{"majority of 5", len(tiers), r.measured(r.five[t.spec.name])})
		if t.spec.kind != mmluPro {
			_, calls := r.best(t)
			cp.series = append(cp.series, series{"best single session", len(tiers) + 2, r.measured(calls)})
		}
		panels = append(panels, cp)
	}
	return reliabilityChart(w, panels)
}

// The targets of the real panels.
const (
	targetRealECE   = 0.03 // fast, safe and adaptive, with outcomes reported
	targetRealOffBy = 0.01 // safe and adaptive with no outcomes: ECE at most reputation off's plus this
)

// targets returns the targets of the real panels as measured, for every
// setting: they bind at 5% of outcomes reported (the calibration against
// reputation off at none); the other settings show where the engine
// stands.
func (r *realReport) targets() []target {
	var ts []target
	for _, t := range r.tables {
		name := t.spec.name
		_, bestCalls := r.best(t)
		best, five := r.measured(bestCalls), r.measured(r.five[name])
		for _, st := range r.cfg.settings() {
			add := func(what, measured string, met bool) {
				ts = append(ts, target{workload: name, setting: st.String(), what: what, measured: measured, met: met})
			}
			var parts []string
			var worst float64
			for _, pol := range []trust.Policy{trust.PolicyFast, trust.PolicySafe, trust.PolicyAdaptive} {
				e := r.measured(r.get(t, pol, st)).ece()
				worst = max(worst, e)
				parts = append(parts, fmt.Sprintf("%s %.3f", pol, e))
			}
			if st.rep == on {
				parts = append(parts, fmt.Sprintf("(%s %.3f)", sharedName, r.measured(r.shared(t, st)).ece()))
			}
			add(fmt.Sprintf("ECE at most %.2f for fast, safe and adaptive", targetRealECE), strings.Join(parts, ", "), worst <= targetRealECE)
			a := r.measured(r.get(t, trust.PolicyAdaptive, st))
			add("adaptive at least as accurate as the best single session and the majority of 5",
				fmt.Sprintf("%s against %s and %s", pct2(a.accuracy()), pct2(best.accuracy()), pct2(five.accuracy())),
				a.correct*best.calls >= best.correct*a.calls && a.correct*five.calls >= five.correct*a.calls)
			add(fmt.Sprintf("adaptive at most %.2f runs per call", t.spec.runsTarget), fmt.Sprintf("%.3f", a.runsPerCall()), a.runsPerCall() <= t.spec.runsTarget)
			if st.rep == on && st.outcomes == 0 {
				var parts []string
				met := true
				for _, pol := range []trust.Policy{trust.PolicySafe, trust.PolicyAdaptive} {
					e, eOff := r.measured(r.get(t, pol, st)).ece(), r.measured(r.get(t, pol, setting{rep: off})).ece()
					met = met && e <= eOff+targetRealOffBy
					parts = append(parts, fmt.Sprintf("%s %.3f against %.3f", pol, e, eOff))
				}
				add("with no outcomes reported, safe and adaptive ECE within 0.01 of reputation off", strings.Join(parts, ", "), met)
			}
		}
	}
	return ts
}

// targetTable writes the real panels' targets, met or not.
func (r *realReport) targetTable(w io.Writer) {
	heading(w, "Targets on the real panels",
		"As measured, on the measured calls. The targets bind with reputation on and 5% of outcomes reported (the last, with none); the other rows show where the engine stands:",
		"| workload | reputation | target | measured | |", "|---|---|---|---|---|")
	for _, t := range r.targets() {
		writeTarget(w, t)
	}
}
