package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// The real-data delegation workloads: each GSM8K problem is
// delegated to a panel of five models whose sessions answer with their
// model's real answer, a JSON number; the trust service settles on the
// answers as it settles any delegation, and a call is right when it
// answers VALID with a result equal to the gold number. RETRY counts as
// wrong in every table.

// A delegationSpec is a real-data delegation workload: which five models
// of zeroeval-gsm8k/gsm8k_answers.csv are the sessions, and the
// runs target for it.
type delegationSpec struct {
	name, title string
	models      [panelSize]string // the sessions' models, session 1 first
	runsTarget  float64           // adaptive's runs per call, at most
}

// delegationSpecs are the delegation workloads, in the order they are
// reported.
var delegationSpecs = []delegationSpec{
	{
		name:  "gsm8k-small",
		title: "GSM8K delegation, five small open models",
		models: [panelSize]string{"Meta-Llama-3.1-8B-Instruct", "Qwen2-7B-Instruct", "gemma-2-9b-it", "Mistral-Nemo-Instruct-2407",
			"Phi-3.5-mini-instruct"},
		runsTarget: 3.0,
	},
	{
		name:  "gsm8k-strong",
		title: "GSM8K delegation, five strong models",
		models: [panelSize]string{"gpt-4o-mini-2024-07-18", "claude-3-haiku-20240307", "gemini-1.5-flash", "deepseek-chat",
			"Meta-Llama-3.1-70B-Instruct"},
		runsTarget: 2.4,
	},
}

// An aggregation is how a delegation's answers are counted: plurality
// (consensus.aggregation majority, today's, grouping equal answers by
// consensus.DefaultKey, under which 18 and 18.0 agree) and, once the
// engine offers it, the numeric median. Each aggregation is a set of
// rows of the delegation tables; aggregations lists those measured.
type aggregation string

const (
	plurality aggregation = "plurality"
	// median: the delegation declares a numeric answer (task.answer
	// "number", exact tolerance), counted by its median at every tier.
	median aggregation = "median"
)

// aggregations are the aggregations measured, in order.
var aggregations = []aggregation{plurality, median}

// A problems is a delegation workload loaded: its problems in a seeded
// order, each with its gold number and the five sessions' answers.
type problems struct {
	spec    *delegationSpec
	golds   []float64
	answers [][panelSize]answer
	rows    []string
	failed  [panelSize]int // the empty or non-number cells, by session
}

func (t *problems) answer(i int, s router.SessionID) answer { return t.answers[i][s-1] }

func (t *problems) len() int { return len(t.golds) }

// loadProblems reads the GSM8K answers of spec's panel from the
// real-data folder dir. A cell holds the first number of the model's
// answer; the session answers it as a JSON number. An empty cell, or one
// that is not a number, is a run that fails (its worker returns an
// error): a failed run is no vote. The problems are put in an order
// drawn from seed.
func loadProblems(dir string, spec *delegationSpec, seed uint64) (*problems, error) {
	path := filepath.Join(dir, "zeroeval-gsm8k", "gsm8k_answers.csv")
	t, err := readProblems(path, spec, seed)
	if err != nil {
		return nil, fmt.Errorf("-data: %s: %w", spec.name, err)
	}
	return t, nil
}

func readProblems(path string, spec *delegationSpec, seed uint64) (*problems, error) {
	r, cols, f, err := readCSV(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	meta, err := columns(path, cols, "id", "gold")
	if err != nil {
		return nil, err
	}
	panel, err := columns(path, cols, spec.models[:]...)
	if err != nil {
		return nil, err
	}
	type row struct {
		id      string
		gold    float64
		answers [panelSize]answer
	}
	var rows []row
	t := &problems{spec: spec}
	for line := 2; ; line++ {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		gold, ok := number(rec[meta[1]])
		if !ok {
			return nil, fmt.Errorf("%s line %d: the gold answer %q is not a number", path, line, rec[meta[1]])
		}
		rw := row{id: rec[meta[0]], gold: gold}
		for s, j := range panel {
			x, ok := number(rec[j])
			if !ok {
				rw.answers[s].failed = true
				t.failed[s]++
				continue
			}
			rw.answers[s].output = json.RawMessage(strconv.FormatFloat(x, 'f', -1, 64))
		}
		rows = append(rows, rw)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: no problem", path)
	}
	keys := make([]float64, len(rows))
	for i := range rows {
		keys[i] = uniform(seed, streamOrder, hashString(rows[i].id))
	}
	order := sortedBy(keys)
	for _, i := range order {
		rw := rows[i]
		for s := range rw.answers {
			rw.answers[s].latency = uniform(seed, streamLatency, hashString(rw.id), uint64(s+1))
		}
		t.rows = append(t.rows, rw.id)
		t.golds = append(t.golds, rw.gold)
		t.answers = append(t.answers, rw.answers)
	}
	return t, nil
}

// truncate keeps the first n problems, all when n is 0.
func (t *problems) truncate(n int) {
	if n > 0 && n < t.len() {
		t.golds, t.answers, t.rows = t.golds[:n], t.answers[:n], t.rows[:n]
	}
}

// number reads a cell as a finite number; an empty cell is none.
func number(cell string) (float64, bool) {
	x, err := strconv.ParseFloat(strings.TrimSpace(cell), 64)
	return x, err == nil && !math.IsInf(x, 0) && !math.IsNaN(x)
}

// equal reports whether a result is the gold number: a JSON number (or a
// string holding one) within 1e-9 of it, relative to its size.
func equal(result json.RawMessage, gold float64) bool {
	var x any
	if json.Unmarshal(result, &x) != nil {
		return false
	}
	var v float64
	switch x := x.(type) {
	case float64:
		v = x
	case string:
		var ok bool
		if v, ok = number(x); !ok {
			return false
		}
	default:
		return false
	}
	return math.Abs(v-gold) <= 1e-9*max(1, math.Abs(gold))
}

// delegationType is the task type of the delegation workloads' calls.
const delegationType = "qa"

// measureDelegation delegates each problem of t under c's tier, one
// call after another, on a fresh engine and service over a fresh panel.
// With reputation on, the host reports the true outcome of a share
// c.outcomes of the calls.
func measureDelegation(ctx context.Context, seed uint64, c cell, agg aggregation, t *problems) ([]call, int, int, error) {
	p := newPanel(t, 0, t.len())
	svc, _, err := newService(p, c, router.Scope(router.KindDelegate, delegationType))
	if err != nil {
		return nil, 0, 0, err
	}
	calls := make([]call, t.len())
	for i := range calls {
		in, err := router.NewObjectInput(map[string]int{"claim": i})
		if err != nil {
			return nil, 0, 0, err
		}
		task := trust.Task{Type: delegationType, Input: in}
		if agg == median {
			task.Answer = trust.AnswerNumber
		}
		resp, err := svc.Call(ctx, &trust.Request{Mode: trust.ModeDelegation, Policy: c.policy, Task: task})
		var perr *problem.Details
		if errors.As(err, &perr) && perr.Code == problem.CodeAllReplicasFailed {
			// Every run failed (fast's lone run on a model that gave no
			// number): the host gets an error, a call without an answer.
			calls[i] = failedCall(perr)
			continue
		}
		if err != nil {
			return nil, 0, 0, fmt.Errorf("problem %d: %w", i, err)
		}
		if err := p.err(); err != nil {
			return nil, 0, 0, fmt.Errorf("problem %d: %w", i, err)
		}
		k := record(router.VerdictValid, resp)
		right := equal(resp.Result, t.golds[i])
		k.correct = k.correct && right
		k.retryRight = resp.Status == trust.StatusRetry && right
		if c.policy == trust.PolicyAdaptive { // the endings tallied (tallyEndings)
			k.ending = ending(t, i, resp, true)
		}
		calls[i] = k
		if c.rep == on && reports(seed, c.draw, i, c.outcomes) && k.answered {
			if err := svc.Feedback(ctx, resp.TraceID, k.correct); err != nil {
				return nil, 0, 0, fmt.Errorf("problem %d, reporting its outcome: %w", i, err)
			}
			calls[i].reported = true
		}
	}
	replays, offPlan := p.reordered()
	return calls, replays, offPlan, nil
}

// failedCall is a call whose runs all failed: RETRY, with the runs the
// error's evidence names.
func failedCall(perr *problem.Details) call {
	k := call{status: trust.StatusRetry}
	var ev struct {
		Runs []router.Run `json:"runs"`
	}
	if json.Unmarshal(perr.Extra, &ev) == nil {
		for _, r := range ev.Runs {
			k.launched++
			if r.SessionID >= 1 && r.SessionID <= panelSize {
				k.runs[r.SessionID-1]++
			}
		}
	}
	return k
}

// byModel returns session s's answers alone, a call of one run each:
// right when the model's number is the gold one, wrong when it is another
// or none. The model states no confidence: the calls state 1.
func byModel(t *problems, s router.SessionID) []call {
	out := make([]call, t.len())
	for i := range out {
		a := t.answer(i, s)
		right := !a.failed && equal(a.output, t.golds[i])
		out[i] = call{status: trust.StatusValid, correct: right, answered: !a.failed, confidence: 1, launched: 1}
		out[i].runs[s-1] = 1
	}
	return out
}

// ofFive returns, for each problem, the answer of the five sessions'
// votes counted by agg (failed runs no votes): the plurality is
// consensus.Majority, the tie going to the group whose first vote comes
// first in session order; the median consensus.Median, exact. Each
// states the Posterior of its tally.
func ofFive(t *problems, agg consensus.Aggregator) ([]call, error) {
	out := make([]call, t.len())
	for i := range out {
		votes := make([]consensus.Vote, panelSize)
		for s := range votes {
			a := t.answer(i, router.SessionID(s+1))
			votes[s] = consensus.Vote{Session: int64(s + 1), Label: consensus.Label(router.LabelOK), Answer: a.output}
			if a.failed {
				votes[s] = consensus.Vote{Session: int64(s + 1), Label: consensus.LabelError}
			}
		}
		o, err := agg.Aggregate(votes, consensus.Policy{})
		if err != nil {
			return nil, fmt.Errorf("the references of 5 of problem %d: %w", i, err)
		}
		k := call{status: trust.StatusRetry, launched: panelSize}
		if o.Winner >= 0 {
			k.status, k.answered, k.confidence = trust.StatusValid, true, o.Confidence
			k.correct = equal(t.answer(i, router.SessionID(o.Winner+1)).output, t.golds[i])
			if o.Strategy == consensus.StrategyMedian {
				k.correct = math.Abs(o.Value-t.golds[i]) <= 1e-9*max(1, math.Abs(t.golds[i]))
			}
		}
		for s := range k.runs {
			k.runs[s] = 1
		}
		out[i] = k
	}
	return out, nil
}

// sortedBy returns the indices of keys in increasing order of key.
func sortedBy(keys []float64) []int {
	idx := make([]int, len(keys))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return cmp.Compare(keys[a], keys[b]) })
	return idx
}

// delegationReport is the delegation workloads measured.
type delegationReport struct {
	cfg       config
	tables    []*problems
	cells     map[delegationCell][]call
	plurality map[string][]call // the plurality of 5, by workload
	median    map[string][]call // the median of 5, by workload
	models    map[string][panelSize][]call
	elapsed   time.Duration
	replays   int
	offPlan   int
}

// A delegationCell is a cell of a delegation workload, under an
// aggregation.
type delegationCell struct {
	cell
	agg aggregation
}

// simulateDelegation loads the delegation workloads cfg names and runs
// every tier on each, one episode per cell, the first cfg.delegationWarm
// problems the earlier calls.
func simulateDelegation(ctx context.Context, cfg config, progress io.Writer) (*delegationReport, error) {
	began := time.Now()
	rep := &delegationReport{cfg: cfg, cells: map[delegationCell][]call{}, plurality: map[string][]call{}, median: map[string][]call{}, models: map[string][panelSize][]call{}}
	var jobs []delegationCell
	tables := map[string]*problems{}
	for i := range delegationSpecs {
		spec := &delegationSpecs[i]
		if !cfg.includes(spec.name) {
			continue
		}
		t, err := loadProblems(cfg.data, spec, cfg.seed)
		if err != nil {
			return nil, err
		}
		t.truncate(cfg.realCalls)
		if t.len() <= cfg.delegationWarm {
			return nil, fmt.Errorf("-delegation-warm: %s has %d problems, not more than the %d earlier calls", spec.name, t.len(), cfg.delegationWarm)
		}
		rep.tables = append(rep.tables, t)
		tables[spec.name] = t
		if rep.plurality[spec.name], err = ofFive(t, consensus.Majority{}); err != nil {
			return nil, err
		}
		if rep.median[spec.name], err = ofFive(t, consensus.Median{}); err != nil {
			return nil, err
		}
		var models [panelSize][]call
		for s := range models {
			models[s] = byModel(t, router.SessionID(s+1))
		}
		rep.models[spec.name] = models
		for _, agg := range aggregations {
			for _, pol := range tiers {
				for _, st := range cfg.settings() {
					jobs = append(jobs, delegationCell{cell{workload: spec.name, policy: pol, rep: st.rep, outcomes: st.outcomes}, agg})
				}
			}
		}
	}
	measureCell := func(ctx context.Context, j delegationCell) ([]call, int, int, error) {
		calls, replays, offPlan, err := measureDelegation(ctx, cfg.seed, j.cell, j.agg, tables[j.workload])
		if err != nil {
			return nil, 0, 0, fmt.Errorf("%s, %s: %w", j.cell, j.agg, err)
		}
		return calls, replays, offPlan, nil
	}
	keep := func(j delegationCell, calls []call) { rep.cells[j] = calls }
	var err error
	if rep.replays, rep.offPlan, err = runEpisodes(ctx, jobs, measureCell, keep, progress, "delegation cells", 5, began); err != nil {
		return nil, err
	}
	rep.elapsed = time.Since(began)
	return rep, nil
}

// measured returns the stats of the calls after the earlier ones.
func (r *delegationReport) measured(calls []call) stats {
	return summarize(calls, func(i int) bool { return i >= r.cfg.delegationWarm })
}

// get returns a cell's calls, nil when it was not measured.
func (r *delegationReport) get(t *problems, agg aggregation, pol trust.Policy, st setting) []call {
	return r.cells[delegationCell{cell{workload: t.spec.name, policy: pol, rep: st.rep, outcomes: st.outcomes}, agg}]
}

// best returns the model right most often on the measured problems, and
// its calls.
func (r *delegationReport) best(t *problems) (router.SessionID, []call) {
	models := r.models[t.spec.name]
	b := 0
	for s := range models {
		if r.measured(models[s]).correct > r.measured(models[b]).correct {
			b = s
		}
	}
	return router.SessionID(b + 1), models[b]
}

// command returns the command line that reproduces the report.
func (r *delegationReport) command() string {
	var names []string
	for _, t := range r.tables {
		names = append(names, t.spec.name)
	}
	s := fmt.Sprintf("go run ./examples/accuracy -data %s -seed %d -delegation-warm %d -outcomes %s", r.cfg.data, r.cfg.seed, r.cfg.delegationWarm, joinFloats(r.cfg.outcomes))
	if r.cfg.realCalls > 0 {
		s += fmt.Sprintf(" -real-calls %d", r.cfg.realCalls)
	}
	return s + " -only " + strings.Join(names, ",")
}

// markdown writes the delegation tables.
func (r *delegationReport) markdown(w io.Writer) {
	cfg := r.cfg
	fmt.Fprintf(w, "Generated by `%s`, which took %s on %d cores (GOMAXPROCS).\n", r.command(), r.elapsed.Round(time.Second), runtime.GOMAXPROCS(0))
	fmt.Fprintf(w, "Each tier delegates every problem in one episode on a fresh engine and service, the problems in a seeded order; rows marked *measured* count the calls after the first %d. A call is right when it answers VALID with the gold number; RETRY counts as wrong.\n", cfg.delegationWarm)
	fmt.Fprintf(w, "Steps the scheduler reordered: %d run again (reputation off), %d kept as they ran (reputation on).\n", r.replays, r.offPlan)
	for _, t := range r.tables {
		measured := t.len() - cfg.delegationWarm
		fmt.Fprintf(w, "\n### %s\n\n", t.spec.title)
		fmt.Fprintf(w, "%d problems (%d measured after %d earlier calls).\n\n", t.len(), measured, cfg.delegationWarm)
		fmt.Fprintln(w, "| session | model | right alone (measured) | failed runs (no number) |")
		fmt.Fprintln(w, "|---|---|---:|---:|")
		for s, m := range t.spec.models {
			fmt.Fprintf(w, "| %d | %s | %s | %d |\n", s+1, m, pct2(r.measured(r.models[t.spec.name][s]).accuracy()), t.failed[s])
		}
		fmt.Fprintf(w, "\nMeasured (calls after the first %d):\n\n", cfg.delegationWarm)
		fmt.Fprintln(w, "| tier | aggregation | reputation | accuracy | 95% interval | runs per call | most runs | share of runs, sessions 1–5 | answered | ECE | Brier |")
		fmt.Fprintln(w, "|---|---|---|---:|---|---:|---:|---|---:|---:|---:|")
		for _, agg := range aggregations {
			for _, pol := range tiers {
				for _, st := range cfg.settings() {
					statsRow(w, string(pol)+" | "+string(agg), st.String(), r.measured(r.get(t, agg, pol, st)))
				}
			}
		}
		b, calls := r.best(t)
		bs := r.measured(calls)
		bs.bins, bs.brier = [bins]bin{}, 0 // the models state no confidence
		statsRow(w, fmt.Sprintf("best model (%d, reference) | —", b), "—", bs)
		statsRow(w, "plurality of 5 (reference) | plurality", "—", r.measured(r.plurality[t.spec.name]))
		statsRow(w, "median of 5 (reference) | median", "—", r.measured(r.median[t.spec.name]))
		fmt.Fprintln(w, "\nThe best model's ECE and Brier score are left at 0: the models state no confidence. Its \"answered\" is the share of problems its answer held a number.")
	}
	heading(w, "Targets of the delegation workloads",
		"As measured, on the measured calls. RETRY counts as wrong:",
		"| workload | reputation | target | measured | |", "|---|---|---|---|---|")
	for _, t := range r.targets() {
		writeTarget(w, t)
	}
}
