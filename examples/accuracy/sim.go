package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// config is what to simulate.
type config struct {
	calls   int      // claims per workload
	seed    uint64   // of the claims and the workers
	episode int      // calls per engine: each episode starts from a fresh engine
	curve   []int    // the learning curve's points: earlier calls of the episode
	only    []string // workload names to run; empty means every workload
	// sweep holds escalation thresholds in (0, 1] (the confidence a lone
	// run needs to settle an adaptive call) to measure adaptive at,
	// besides the service's default, 0.
	sweep []float64
	// outcomes holds the shares of the calls whose true outcome the host
	// reports (see reports) to measure reputation on at.
	outcomes []float64
	data     string // the real-data folder; empty: no real-data workload
	realWarm int    // the earlier calls of a real-data episode, before the measured ones
	// delegationWarm is the earlier calls of a delegation workload's
	// episode, before the measured ones.
	delegationWarm int
	// draws is how many other draws of the reported calls each real-data
	// validation cell with outcomes is measured on besides the seed's
	// own (see realReport.drawTable).
	draws int
	// realCalls, when above 0, caps the calls of a real-data workload or
	// world: the first in its seeded order.
	realCalls int
	// families are the world families to measure (with -families),
	// each on every seed of seeds and cfg.panels panels per seed.
	families []*family
	seeds    []uint64
	panels   int
	// shift moves, with -families, the selection draws of every engine
	// by that many calls (see cell.shift).
	shift int
	// book holds, with -families, the options of every engine's
	// reputation book (-horizon, -lead-level); zero fields mean the
	// defaults.
	book reputation.Options
	// drift swaps, with -families, the answers of each validation
	// world's best and worst sessions from its first measured call on
	// (see world.drift).
	drift bool
	// forget has the host, with drift, forget the two sessions that
	// swap as they swap (reputation.Book.Forget).
	forget bool
}

// warm is the number of earlier calls of its episode after which a call
// is measured: the learning curve's last point.
func (c config) warm() int { return c.curve[len(c.curve)-1] }

// tiers are the tiers measured, in the order they are reported.
var tiers = []trust.Policy{trust.PolicyFast, trust.PolicySafe, trust.PolicyOracle, trust.PolicyAdaptive}

// A variant is reputation off (today's engine and service) or on
// (learned online).
type variant bool

const (
	off variant = false
	on  variant = true
)

func (v variant) String() string {
	if v == on {
		return "on"
	}
	return "off"
}

// cell is one measurement: a tier on a workload, with reputation off or on.
type cell struct {
	workload string
	policy   trust.Policy
	rep      variant
	// shared makes the engine serve an adaptive call before each of the
	// cell's calls: fast, whose lone vote teaches the book nothing, then
	// reads what adaptive's calls taught it, as on an engine that serves
	// both tiers.
	shared bool
	// lone is adaptive's escalation threshold (trust.WithEscalationThreshold);
	// 0 is the service's default, and no option is given.
	lone float64
	// outcomes is the share of the calls whose true outcome the host
	// reports (see reports; reputation on only).
	outcomes float64
	// draw picks which calls make up that share: 0 the seed's own draw,
	// d > 0 another draw of the same share, the claims and the workers
	// unchanged (see reports).
	draw int
	// shift advances the engine's selection draws by that many calls
	// before the first (router.Engine.Order advances them on every
	// call): another sequence of the same draws, which orders sessions
	// as well founded on the same evidence.
	shift int
	// book holds the options of the engine's reputation book; zero
	// fields mean the defaults.
	book reputation.Options
	// forget, when not zero, are two sessions the host forgets
	// (reputation.Book.Forget) just before call forgetAt.
	forget   [2]router.SessionID
	forgetAt int
}

func (c cell) String() string {
	s := fmt.Sprintf("%s %s reputation %s", c.workload, c.policy, c.rep)
	if c.shared {
		s += " (engine shared with adaptive)"
	}
	if c.lone != 0 {
		s += fmt.Sprintf(" (escalation threshold %g)", c.lone)
	}
	if c.outcomes != 0 {
		s += fmt.Sprintf(" (%g%% of outcomes reported)", 100*c.outcomes)
	}
	if c.draw != 0 {
		s += fmt.Sprintf(" (draw %d)", c.draw)
	}
	if c.shift != 0 {
		s += fmt.Sprintf(" (selection draws shifted by %d)", c.shift)
	}
	if c.book.Horizon != 0 {
		s += fmt.Sprintf(" (horizon %g)", c.book.Horizon)
	}
	if c.book.LeadLevel != 0 {
		s += fmt.Sprintf(" (lead level %g)", c.book.LeadLevel)
	}
	if c.book.LeadMargin != 0 {
		s += fmt.Sprintf(" (lead margin %g)", c.book.LeadMargin)
	}
	if c.forget != [2]router.SessionID{} {
		s += fmt.Sprintf(" (sessions %d and %d forgotten before call %d)", c.forget[0], c.forget[1], c.forgetAt)
	}
	return s
}

// call is what one trust call answered.
type call struct {
	status     trust.Status
	correct    bool // the status is the claim's truth
	answered   bool // VALID or INVALID
	confidence float64
	launched   int
	runs       [panelSize]int // runs launched per session (index: id - 1)
	reported   bool           // the host reported the call's true outcome
	retryRight bool           // a delegation's RETRY carried the right answer as its best-effort result
	ending     string         // how an adaptive call ended (see ending); "" at other tiers
	exam       int            // runs launched by the exam its report ran (trust.Service.FeedbackVerdict)
}

// report is every cell's calls, by claim number.
type report struct {
	cfg     config
	claims  map[string][]claim // by workload
	cells   map[cell][]call
	five    map[string][]call // the majority of 5 reference, by workload
	elapsed time.Duration
	replays int // steps run again because the scheduler reordered them (reputation off)
	offPlan int // steps kept although the scheduler reordered them (reputation on)
}

// simulate runs every cell, episode by episode: each episode of each cell
// on a panel, an engine and a service of its own, its calls one after
// another, which keeps it deterministic. Episodes run concurrently.
func simulate(ctx context.Context, cfg config, progress io.Writer) (*report, error) {
	switch {
	case cfg.calls < 1:
		return nil, fmt.Errorf("-calls must be at least 1, got %d", cfg.calls)
	case cfg.episode < 1:
		return nil, fmt.Errorf("-episode must be at least 1, got %d", cfg.episode)
	case len(cfg.curve) == 0 || cfg.warm() >= cfg.episode:
		return nil, fmt.Errorf("-curve must end below -episode (%d), got %v", cfg.episode, cfg.curve)
	}
	began := time.Now()
	rep := &report{cfg: cfg, claims: map[string][]claim{}, cells: map[cell][]call{}, five: map[string][]call{}}

	type job struct {
		c     cell
		w     *workload
		first int
	}
	var jobs []job
	for i := range workloads {
		w := &workloads[i]
		if !cfg.includes(w.name) {
			continue
		}
		rep.claims[w.name] = w.claims(cfg.seed, 0, cfg.calls)
		var err error
		if rep.five[w.name], err = majorityOfFive(simulated{cfg.seed, w, rep.claims[w.name]}, cfg.calls); err != nil {
			return nil, err
		}
		for _, pol := range tiers {
			for _, v := range rep.settings() {
				cs := []cell{{workload: w.name, policy: pol, rep: v.rep, outcomes: v.outcomes}}
				if pol == trust.PolicyFast && v.rep == on {
					cs = append(cs, cell{workload: w.name, policy: pol, rep: v.rep, outcomes: v.outcomes, shared: true})
				}
				if pol == trust.PolicyAdaptive && slices.Contains(sweepSettings, v) {
					for _, t := range cfg.sweep {
						cs = append(cs, cell{workload: w.name, policy: pol, rep: v.rep, lone: t})
					}
				}
				for _, c := range cs {
					rep.cells[c] = make([]call, cfg.calls)
					for first := 0; first < cfg.calls; first += cfg.episode {
						jobs = append(jobs, job{c, w, first})
					}
				}
			}
		}
	}
	if len(jobs) == 0 {
		return nil, fmt.Errorf("-only names no workload; the workloads are %s", workloadNames())
	}
	measureEpisode := func(ctx context.Context, j job) ([]call, int, int, error) {
		cs := rep.claims[j.w.name]
		n := min(cfg.episode, len(cs)-j.first)
		calls, replays, offPlan, err := measure(ctx, cfg.seed, j.c, simulated{cfg.seed, j.w, cs}, j.first, n)
		if err != nil {
			return nil, 0, 0, fmt.Errorf("%s, claims from %d: %w", j.c, j.first, err)
		}
		return calls, replays, offPlan, nil
	}
	keep := func(j job, calls []call) { copy(rep.cells[j.c][j.first:], calls) }
	var err error
	if rep.replays, rep.offPlan, err = runEpisodes(ctx, jobs, measureEpisode, keep, progress, "episodes", 10, began); err != nil {
		return nil, err
	}
	rep.elapsed = time.Since(began)
	return rep, nil
}

// runEpisodes measures every job, at most 2×GOMAXPROCS at once (an episode
// waits on its workers much of the time), and hands each job's calls to
// keep, one job at a time. After every every-th job and the last it writes
// "accuracy: done/total <what> done (elapsed since began)" to progress. It
// returns the steps the scheduler reordered, summed over the jobs: run again
// (reputation off) and kept as they ran (reputation on).
func runEpisodes[J any](ctx context.Context, jobs []J, measure func(context.Context, J) (calls []call, replays, offPlan int, err error), keep func(J, []call), progress io.Writer, what string, every int, began time.Time) (replays, offPlan int, err error) {
	var mu sync.Mutex
	done := 0
	g, ctx := errgroup.WithContext(ctx)
	g.SetLimit(2 * runtime.GOMAXPROCS(0))
	for _, j := range jobs {
		g.Go(func() error {
			calls, r, o, err := measure(ctx, j)
			if err != nil {
				return err
			}
			mu.Lock()
			defer mu.Unlock()
			keep(j, calls)
			replays += r
			offPlan += o
			done++
			if done%every == 0 || done == len(jobs) {
				fmt.Fprintf(progress, "accuracy: %d/%d %s done (%s)\n", done, len(jobs), what, time.Since(began).Round(time.Second))
			}
			return nil
		})
	}
	if err := g.Wait(); err != nil {
		return 0, 0, err
	}
	return replays, offPlan, nil
}

// includes reports whether workload name is to run.
func (c config) includes(name string) bool {
	if len(c.only) == 0 {
		return true
	}
	for _, o := range c.only {
		if o == name {
			return true
		}
	}
	return false
}

// workloadNames lists the workloads' names, the simulated ones first.
func workloadNames() string {
	var names []string
	for _, w := range workloads {
		names = append(names, w.name)
	}
	for _, p := range panelSpecs {
		names = append(names, p.name+" (-data)")
	}
	for _, d := range delegationSpecs {
		names = append(names, d.name+" (-data)")
	}
	return strings.Join(names, ", ")
}

// claimType is the claim type of every validation measure asks for: its
// calls teach the sessions' records of router.Scope(router.KindValidate,
// claimType).
const claimType = "classification"

// measure makes one trust call per claim of src from first to
// first+n-1 under c's tier, on a fresh engine and service over a fresh
// panel. With reputation on, the host reports the true outcome of a
// share c.outcomes of the calls (see reports).
func measure(ctx context.Context, seed uint64, c cell, src claims, first, n int) ([]call, int, int, error) {
	return measureThen(ctx, seed, c, src, first, n, nil)
}

// measureThen is measure, handing the episode's engine to then, when it
// is not nil, once the last call is made.
func measureThen(ctx context.Context, seed uint64, c cell, src claims, first, n int, then func(*router.Engine) error) ([]call, int, int, error) {
	p := newPanel(src, first, n)
	scope := router.Scope(router.KindValidate, claimType)
	svc, engine, err := newService(p, c, scope)
	if err != nil {
		return nil, 0, 0, err
	}
	calls := make([]call, n)
	for j := range calls {
		i := first + j
		if c.forget != [2]router.SessionID{} && i == c.forgetAt && p.book != nil {
			if err := p.book.Forget(ctx, scope, int64(c.forget[0]), int64(c.forget[1])); err != nil {
				return nil, 0, 0, fmt.Errorf("claim %d, forgetting: %w", i, err)
			}
		}
		req := func(pol trust.Policy) *trust.Request {
			return &trust.Request{
				Mode:   trust.ModeValidation,
				Policy: pol,
				Task: trust.Task{
					Type:          claimType,
					ClaimedResult: json.RawMessage(`{"claim":` + strconv.Itoa(i) + `}`),
				},
			}
		}
		if c.shared {
			if _, err := svc.Call(ctx, req(trust.PolicyAdaptive)); err != nil {
				return nil, 0, 0, fmt.Errorf("claim %d, adaptive: %w", i, err)
			}
		}
		resp, err := svc.Call(ctx, req(c.policy))
		if err != nil {
			return nil, 0, 0, fmt.Errorf("claim %d: %w", i, err)
		}
		if err := p.err(); err != nil {
			return nil, 0, 0, fmt.Errorf("claim %d: %w", i, err)
		}
		calls[j] = record(src.truth(i), resp)
		if c.policy == trust.PolicyAdaptive { // the endings tallied (tallyEndings)
			calls[j].ending = ending(src, i, resp, false)
		}
		if c.rep == on && reports(seed, c.draw, i, c.outcomes) {
			before := p.runs()
			p.turns.start(nil) // an exam's router calls take no turns: it asks one session at a time
			err := svc.FeedbackVerdict(ctx, resp.TraceID, src.truth(i))
			if err != nil && !errors.Is(err, trust.ErrUnknownCall) { // a call whose votes tied has nothing to teach
				return nil, 0, 0, fmt.Errorf("claim %d, reporting its verdict: %w", i, err)
			}
			if err := p.err(); err != nil {
				return nil, 0, 0, fmt.Errorf("claim %d, its exam: %w", i, err)
			}
			calls[j].reported = err == nil
			calls[j].exam = p.runs() - before // the report's exam
		}
	}
	if then != nil {
		if err := then(engine); err != nil {
			return nil, 0, 0, err
		}
	}
	replays, offPlan := p.reordered()
	return calls, replays, offPlan, nil
}

// reports reports whether the host reports the true outcome of claim i
// when it reports a share of the calls: a draw of its own, so that every
// tier reports the outcomes of the same claims; draw d > 0 is another
// such draw (d = 0 is the seed's own). A validation's report is the
// claim's true verdict, whatever the call answered
// (trust.Service.FeedbackVerdict); a delegation's, whether its answer
// was right, for a call that answered (trust.Service.Feedback).
func reports(seed uint64, draw, i int, share float64) bool {
	if share <= 0 {
		return false
	}
	if draw == 0 {
		return uniform(seed, streamOutcome, uint64(i)) < share
	}
	return uniform(seed, streamOutcome, uint64(i), uint64(draw)) < share
}

// newService returns the trust service of one episode of cell c and the
// engine it runs on: the real trust.Service over a real router.Engine
// whose workers are p's, with reputation off or on (c.rep), adaptive's
// escalation threshold c.lone (0: the default) and the engine's
// selection draws shifted by c.shift calls. Every tier draws from the
// panel's five sessions; adaptive takes its candidates from the pool.
// scope is the reputation scope of the episode's calls.
func newService(p *panel, c cell, scope reputation.Scope) (*trust.Service, *router.Engine, error) {
	engine, trustOpts, err := newEngine(p, c.rep, c.book)
	if err != nil {
		return nil, nil, err
	}
	for range c.shift {
		engine.Order(nil, consensus.Reliabilities{}, nil)
	}
	trustOpts = append(trustOpts, trust.WithSessionPool(1, 2, 3, 4, 5))
	if c.lone != 0 {
		trustOpts = append(trustOpts, trust.WithEscalationThreshold(c.lone))
	}
	svc, err := trust.New(stepper{Engine: engine, p: p, scope: scope}, trustOpts...)
	return svc, engine, err
}

// newEngine returns the engine of one episode, over p's workers, with
// reputation off or on (its book's options book: 0 for the defaults),
// and the options the trust service over it takes for that variant.
func newEngine(p *panel, rep variant, book reputation.Options) (*router.Engine, []trust.Option, error) {
	engineOpts := []router.EngineOption{
		router.WithEngineClock(p.now),
		// No run waits on time: a replica still running after this is
		// one the plan let wait, and the panel's check reports it.
		router.WithReplicaTimeout(10 * time.Second),
		// A run fails here when its model's answer held no number, which
		// a real worker returns as an answer, not as a failure of its
		// endpoint; and a cooldown, timed by the wall clock, would make
		// the figures depend on the machine's speed. Failing sessions
		// stay in use.
		router.WithHealth(router.DefaultFailureThreshold, 0),
	}
	engineOpts, trustOpts, err := withReputation(p, rep, book, engineOpts, nil)
	if err != nil {
		return nil, nil, err
	}
	engine, err := router.NewEngine(p.sessions(), engineOpts...)
	return engine, trustOpts, err
}

// record is what resp answered to a claim whose truth is truth.
func record(truth router.Verdict, resp *trust.Response) call {
	k := call{
		status:     resp.Status,
		correct:    resp.Status == trust.Status(truth),
		answered:   resp.Status == trust.StatusValid || resp.Status == trust.StatusInvalid,
		confidence: resp.Confidence,
		launched:   resp.Evidence.Launched + resp.Evidence.Checked, // a leader's check is a run too
	}
	for _, st := range resp.Evidence.Steps {
		for _, s := range st.Sessions {
			if s >= 1 && s <= panelSize {
				k.runs[s-1]++
			}
		}
	}
	return k
}
