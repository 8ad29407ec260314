package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"time"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

// A panel is the simulated workers of one engine: the panelSize sessions
// of a workload, each in a worker pool of its own.
//
// It also keeps the engine's early quorum deterministic. Replicas answer
// in the order of their drawn latencies. When every worker of a step has
// been asked, the panel works out, with the consensus package's own
// Majority.Decided (or, for a weighted step, the Decided of the
// aggregator decide gives for the step's sessions), which replicas answer
// before the outcome is decided;
// it releases them one at a time, each only after the engine has timed
// and recorded the previous one (the engine reads the panel's clock twice
// once a run returns), and the others wait to be cancelled, as slower
// replicas are. The last instants of a run, between that record and its
// vote reaching the aggregation, are beyond the panel's sight: when the
// scheduler lets the next replica overtake them, the engine's labels
// differ from the plan, and [stepper] runs the step again (its answers
// are drawn again the same). A step still out of plan after maxReplays
// is kept in fault and ends the run.
//
// A panel serves one engine whose trust calls run one at a time; the
// stepper also runs the router calls of one trust call one at a time
// (adaptive makes two at once after a split), so that at most one
// version 3 step is in flight. That changes when runs happen, not what
// they answer.
type panel struct {
	src   source // what the sessions answer
	first int    // the number of the first claim the panel may be asked about
	n     int    // the number of claims it may be asked about, from first
	// decide returns the aggregator whose Decided the engine applies to
	// a weighted step of job on sessions (by replica).
	decide func(job *router.Job, sessions []router.SessionID) (consensus.Aggregator, error)
	// book is the engine's reputation book; nil with reputation off.
	book *reputation.Book

	calls   sync.Mutex // held by the version 3 step in flight
	mu      sync.Mutex
	step    *step  // the version 3 step in flight
	learns  bool   // the engine learns from every step: a step is never run again
	turns   *turns // the order of an adaptive call's router calls
	replays int    // steps run again because the scheduler reordered them
	offPlan int    // steps of a learning engine kept although the scheduler reordered them
	fault   error  // a step that never ran as planned
	ran     int    // the runs asked of the sessions
}

// step is one version 3 call: its replicas' answers and their plan.
type step struct {
	n        int
	policy   consensus.DisagreementPolicy
	cons     router.ConsensusRequest // the step's consensus block: its aggregation
	delegate bool                    // a delegation: the answers are outputs
	answers  []answer                // by replica
	sessions []router.SessionID      // by replica
	joined   int
	order    []int           // the replicas that answer, in arrival order
	release  []chan struct{} // closed to let a replica answer, by replica
	next     int             // position in order of the next replica to release
	clocks   int             // clock reads to wait before releasing it
}

// A source is what a panel's sessions answer, by claim number (for a
// delegation, problem number). A session answers the same of a claim
// whichever tier asks.
type source interface {
	// answer returns session s's answer to claim i; s is one of the
	// panel's sessions, 1 to panelSize.
	answer(i int, s router.SessionID) answer
}

// A claims is a source of validation claims: each has a truth.
type claims interface {
	source
	truth(i int) router.Verdict
}

// newPanel returns the panel of n claims of src, from claim first.
func newPanel(src source, first, n int) *panel {
	return &panel{src: src, first: first, n: n, turns: newTurns()}
}

// sessions returns the panel's sessions, ids 1 to panelSize.
func (p *panel) sessions() []router.Session {
	ws := make([]router.Worker, panelSize)
	for i := range ws {
		ws[i] = router.WorkerFunc(p.work)
	}
	return routertest.Sessions(1, panelSize, ws...)
}

// work answers a validate or delegate job as replica job.Replica of the
// step in flight. A validate job names its claim in the claimed output, a
// delegate job in its input: {"claim": i}.
func (p *panel) work(ctx context.Context, job *router.Job) (*router.Result, error) {
	var ref struct {
		Claim int `json:"claim"`
	}
	var raw json.RawMessage
	switch {
	case job.Kind == router.KindDelegate:
		raw = job.Input.Raw()
	case job.Claim != nil:
		raw = job.Claim.Output
	}
	if json.Unmarshal(raw, &ref) != nil || ref.Claim < p.first || ref.Claim >= p.first+p.n {
		return nil, errors.New("accuracy: job names no claim of the panel")
	}
	if job.SessionID < 1 || job.SessionID > panelSize {
		return nil, fmt.Errorf("accuracy: session %d is not one of the panel's", job.SessionID)
	}
	a := p.src.answer(ref.Claim, job.SessionID)

	p.mu.Lock()
	st := p.step
	if st == nil || job.Replica >= st.n {
		p.mu.Unlock()
		return nil, errors.New("accuracy: job outside a planned step")
	}
	st.answers[job.Replica] = a
	st.sessions[job.Replica] = job.SessionID
	p.ran++
	st.joined++
	if st.joined == st.n {
		agg, err := p.aggregator(job, st)
		if err != nil {
			p.fault, agg = err, consensus.Majority{} // the fault ends the run
		}
		st.plan(agg)
	}
	release := st.release[job.Replica]
	p.mu.Unlock()

	select {
	case <-release:
	case <-ctx.Done(): // decided without this replica
		return nil, context.Cause(ctx)
	}
	p.mu.Lock()
	st.clocks = 2 // the engine's reads after the run: its latency, then its health
	p.mu.Unlock()
	runtime.Gosched() // let the replica released before this one deliver its vote first
	switch {
	case a.failed:
		return nil, errors.New("accuracy: the model's answer holds no number")
	case st.delegate:
		return &router.Result{Output: a.output}, nil
	}
	return &router.Result{Verdict: a.verdict, Confidence: a.confidence}, nil
}

// aggregator returns the aggregator the engine applies to st, a step of
// job: the majority; weighted, with the reliabilities decide gives; or
// the unweighted median within the step's tolerance (the trust service
// asks for no weighted median).
func (p *panel) aggregator(job *router.Job, st *step) (consensus.Aggregator, error) {
	switch c := st.cons; {
	case c.Aggregation == router.AggregationWeighted:
		if p.decide == nil {
			return nil, errors.New("accuracy: a weighted step on a panel that knows no reliabilities")
		}
		agg, err := p.decide(job, st.sessions)
		if err != nil {
			return nil, fmt.Errorf("accuracy: reading the step's reliabilities: %w", err)
		}
		return agg, nil
	case c.Aggregation == router.AggregationMedian && c.WeightBy == "":
		var tol consensus.Tolerance
		if t := c.Tolerance; t != nil {
			tol = consensus.Tolerance{Absolute: t.Absolute, Relative: t.Relative}
		}
		return consensus.Median{Tolerance: tol}, nil
	case c.Aggregation == "" || c.Aggregation == router.AggregationMajority:
		return consensus.Majority{}, nil
	}
	return nil, fmt.Errorf("accuracy: the panel plans no step of aggregation %q weighted by %q", st.cons.Aggregation, st.cons.WeightBy)
}

// plan orders the replicas by latency and finds the shortest prefix after
// which agg, the engine's aggregator, is decided; it releases the first
// replica.
func (st *step) plan(agg consensus.Aggregator) {
	byLatency := make([]int, st.n)
	for i := range byLatency {
		byLatency[i] = i
	}
	slices.SortStableFunc(byLatency, func(a, b int) int {
		switch x, y := st.answers[a].latency, st.answers[b].latency; {
		case x < y:
			return -1
		case x > y:
			return 1
		}
		return 0
	})
	votes := make([]consensus.Vote, st.n)
	policy := consensus.Policy{Disagreement: st.policy}
	for k, r := range byLatency {
		votes[r] = consensus.Vote{Session: int64(st.sessions[r]), Label: st.label(r)}
		if !st.delegate && !st.answers[r].failed { // the confidence the engine's vote carries
			votes[r].Confidence = st.answers[r].confidence
		}
		if st.delegate && !st.answers[r].failed {
			votes[r].Answer = st.answers[r].output
		}
		if agg.Decided(votes, policy) {
			st.order = byLatency[:k+1]
			break
		}
	}
	close(st.release[st.order[0]])
}

// now is the engine's clock: it counts the reads that follow a released
// replica's answer, and releases the next one after them.
func (p *panel) now() time.Time {
	p.mu.Lock()
	if st := p.step; st != nil && st.clocks > 0 {
		st.clocks--
		if st.clocks == 0 && st.next+1 < len(st.order) {
			st.next++
			close(st.release[st.order[st.next]])
		}
	}
	p.mu.Unlock()
	return time.Now()
}

// label returns the label replica r's run ends with: its verdict, OK for
// a delegation's output, ERROR for a failed run.
func (st *step) label(r int) consensus.Label {
	switch a := st.answers[r]; {
	case a.failed:
		return consensus.Label(router.LabelError)
	case st.delegate:
		return consensus.Label(router.LabelOK)
	default:
		return consensus.Label(a.verdict)
	}
}

// begin opens the step of a version 3 call of consensus cons.
func (p *panel) begin(cons router.ConsensusRequest, delegate bool) {
	n := cons.Replicas
	st := &step{n: n, policy: consensus.DisagreementPolicy(cons.DisagreementPolicy), cons: cons, delegate: delegate, answers: make([]answer, n), sessions: make([]router.SessionID, n), release: make([]chan struct{}, n)}
	for i := range st.release {
		st.release[i] = make(chan struct{})
	}
	p.mu.Lock()
	p.step = st
	p.mu.Unlock()
}

// end closes the step and checks the engine's labels against its plan:
// it returns an error describing the first difference.
func (p *panel) end(runs []router.Run) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	st := p.step
	p.step = nil
	want := make([]router.Label, st.n)
	for i := range want {
		want[i] = router.LabelCancelled
	}
	for _, r := range st.order {
		want[r] = router.Label(st.label(r))
	}
	got := make([]router.Label, len(runs))
	for i, r := range runs {
		got[i] = r.Label
	}
	if !slices.Equal(got, want) {
		return fmt.Errorf("accuracy: the engine's replicas %v differ from the plan %v", got, want)
	}
	return nil
}

// err returns the fault, if any.
func (p *panel) err() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.fault
}

// reordered returns the count of steps run again, and of steps kept out
// of plan.
func (p *panel) reordered() (replays, offPlan int) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.replays, p.offPlan
}

// maxReplays bounds the runs of one step that the scheduler reordered.
const maxReplays = 100

// stepper is the engine seen by the trust service: it passes every call
// through, telling the panel when a version 3 validation begins and ends,
// and runs a step again when its replicas did not arrive as planned. An
// engine that learns from every step (reputation on) would learn from the
// step twice: its steps are kept as they ran, and counted. Every other
// method is the engine's, Reputation and Order included, so that a trust
// service over the stepper weighs and learns as over the engine (Order
// also begins a trust call's turns, with the leader of scope, the
// scope of the service's calls, first).
type stepper struct {
	*router.Engine
	p     *panel
	scope reputation.Scope
}

// ValidateV3 runs req on the engine inside a planned step, a call on one
// session in its turn (see turns).
func (s stepper) ValidateV3(ctx context.Context, req *router.ValidateV3Request) (*router.ValidateV3Response, error) {
	return planned(ctx, s, req.Consensus, false, func(ctx context.Context) (*router.ValidateV3Response, []router.Run, error) {
		resp, err := s.Engine.ValidateV3(ctx, req)
		if err != nil {
			return nil, nil, err
		}
		return resp, resp.Evidence.Runs, nil
	})
}

// DelegateV3 runs req on the engine inside a planned step, as ValidateV3.
func (s stepper) DelegateV3(ctx context.Context, req *router.DelegateV3Request) (*router.DelegateV3Response, error) {
	return planned(ctx, s, req.Consensus, true, func(ctx context.Context) (*router.DelegateV3Response, []router.Run, error) {
		resp, err := s.Engine.DelegateV3(ctx, req)
		if err != nil {
			return nil, nil, err
		}
		return resp, resp.Evidence.Runs, nil
	})
}

// planned makes the version 3 call do of consensus cons inside a planned
// step, in its turn, and runs it again when its replicas did not arrive
// as planned (see stepper). do returns the response and its runs.
func planned[R any](ctx context.Context, s stepper, cons router.ConsensusRequest, delegate bool, do func(context.Context) (R, []router.Run, error)) (R, error) {
	if pool := cons.SessionPool; len(pool) == 1 {
		s.p.turns.wait(pool[0])
		defer s.p.turns.done(pool[0])
	}
	s.p.calls.Lock()
	defer s.p.calls.Unlock()
	once := func() (R, error, error) {
		s.p.begin(cons, delegate)
		resp, runs, err := do(ctx)
		var perr *router.Error
		if err != nil && errors.As(err, &perr) && len(perr.Extra) > 0 {
			var ev struct {
				Runs []router.Run `json:"runs"`
			}
			_ = json.Unmarshal(perr.Extra, &ev) // a failed decode shows as a fault
			runs = ev.Runs
		}
		return resp, err, s.p.end(runs)
	}
	if s.p.learns {
		resp, err, off := once()
		if off != nil {
			s.p.mu.Lock()
			s.p.offPlan++
			s.p.mu.Unlock()
		}
		return resp, err
	}
	for range maxReplays - 1 {
		resp, err, off := once()
		if off == nil || ctx.Err() != nil {
			return resp, err
		}
		s.p.mu.Lock()
		s.p.replays++
		s.p.mu.Unlock()
	}
	resp, err, off := once()
	if off != nil {
		s.p.mu.Lock()
		s.p.fault = fmt.Errorf("%w (%d runs of the step)", off, maxReplays)
		s.p.mu.Unlock()
	}
	return resp, err
}

// runs returns the runs asked of the sessions so far.
func (p *panel) runs() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.ran
}
