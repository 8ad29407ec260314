package router

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/internal/httpapi"
	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/reputation"
)

// Defaults of reputation-aware selection ([WithSelection]).
const (
	// DefaultMaxShare bounds any one session's share of the runs an
	// engine launched lately: a session at or above it goes after every
	// other fit session in the order selection takes them, which first
	// takes one session from each worker pool not yet used (see
	// [Engine.ValidateV3]), so that it still runs before the sessions of
	// a pool already used.
	DefaultMaxShare = 0.4
	// DefaultExploreEvery is how often selection puts the least used fit
	// session first, so that a session its draws seldom favour (see
	// [Engine.ValidateV3]) still runs: one call in 20.
	DefaultExploreEvery = 20
	// DefaultShareWindow is how many of the latest runs the shares are
	// counted over.
	DefaultShareWindow = 500
	// DefaultFeedbackMemory is how many recent calls the engine keeps
	// for [Engine.Feedback], by trace id; the oldest is forgotten first.
	DefaultFeedbackMemory = 10000
)

// WithReputation sets the book the engine learns session reliabilities
// in and reads them from (see [Engine.ValidateV3]). The default is a
// book over a new reputation.Memory with the default options. nil turns
// reputation off: selection rotates as it did before reputation existed,
// nothing is learned, and aggregation "weighted" is refused with a 400
// *Error.
func WithReputation(b *reputation.Book) EngineOption {
	return func(e *Engine) error {
		e.rep = b
		return nil
	}
}

// WithSelection sets the bounds of reputation-aware selection: maxShare,
// in (0, 1], bounds a session's share of the latest runs
// ([DefaultMaxShare]), and one call in exploreEvery puts the least used
// fit session first ([DefaultExploreEvery]; 0 never does).
func WithSelection(maxShare float64, exploreEvery int) EngineOption {
	return func(e *Engine) error {
		if !(maxShare > 0 && maxShare <= 1) {
			return fmt.Errorf("%w: max share %v is outside (0, 1]", ErrInvalidOption, maxShare)
		}
		if exploreEvery < 0 {
			return fmt.Errorf("%w: explore every %d is negative", ErrInvalidOption, exploreEvery)
		}
		e.maxShare, e.exploreEvery = maxShare, exploreEvery
		return nil
	}
}

// Reputation returns the engine's reputation book, nil when reputation
// is off ([WithReputation]). A trust service over the engine weighs and
// learns with it.
func (e *Engine) Reputation() *reputation.Book { return e.rep }

// Scope returns the reputation scope of a job of kind k judging a claim
// of claimType: the kind as the operation, and the claim type when it is
// one of the types the interface names (summary, json_tool_call,
// trade_decision, classification, tool_output, plan_step), so that
// callers cannot grow the records without bound.
func Scope(k Kind, claimType string) reputation.Scope {
	sc := reputation.Scope{Operation: string(k)}
	switch claimType {
	case "summary", "json_tool_call", "trade_decision", "classification", "tool_output", "plan_step":
		sc.Kind = claimType
	}
	return sc
}

// scopeOf returns the reputation scope of job.
func scopeOf(job *Job) reputation.Scope {
	var t string
	if job.Claim != nil {
		t = job.Claim.Type
	}
	return Scope(job.Kind, t)
}

// aggregator returns the aggregator of a version 3 call under policy:
// weighted by rel when the request asks for it (with sessions the
// replicas' sessions), else majority; one that waits for every vote under
// return_all.
func (e *Engine) aggregator(c *ConsensusRequest, rel consensus.Reliabilities, sessions []*session) (consensus.Aggregator, error) {
	var agg consensus.Aggregator = consensus.Majority{}
	weighted := c.Aggregation == AggregationWeighted || c.Aggregation == AggregationMedian && c.WeightBy != ""
	if weighted && e.rep == nil {
		field := "consensus.aggregation"
		if c.Aggregation != AggregationWeighted {
			field = "consensus.weight_by"
		}
		return nil, problem.Invalid([]FieldError{{
			Field: field, Rule: "reputation_on",
			Message: fmt.Sprintf("%q weighs votes by reputation, which this router does not keep", c.Aggregation),
		}})
	}
	launched := make([]int64, len(sessions))
	for i, s := range sessions {
		launched[i] = int64(s.ID)
	}
	switch c.Aggregation {
	case AggregationWeighted:
		agg = consensus.Weighted{Reliabilities: rel, Launched: launched}
	case AggregationMedian, AggregationMedianOfMeans:
		agg = numericAggregator(c, rel, launched, weighted)
	}
	if c.DisagreementPolicy == DisagreeReturnAll {
		agg = everyVote{agg}
	}
	return agg, nil
}

// everyVote is an aggregator waiting for every replica: the return_all
// policy reports all replica results, so no straggler is cut short by an
// early quorum.
type everyVote struct{ consensus.Aggregator }

// Decided reports false: the runner then waits for every vote.
func (everyVote) Decided([]consensus.Vote, consensus.Policy) bool { return false }

// weigh adds to call what a weighted outcome records: the weight and
// reliability of each vote (of each failed run too when failures are
// negative evidence, since they form a weighted group of their own),
// weight_by and the reputation snapshot, whose tempering counts the same
// runs. Every call gets the replicas that agreed with the winner.
func (e *Engine) weigh(call *consensusCall, out consensus.Outcome, key func(any) (string, error), rel consensus.Reliabilities) {
	call.block.Agreeing = out.Backers(key)
	if out.Weights == nil {
		return
	}
	if out.Strategy == consensus.StrategyWeighted {
		call.block.Strategy = AggregationWeighted
	}
	call.block.WeightBy = WeightByReputation
	n := 0
	figures := make([]float64, 2*len(out.Weights)) // each run's reliability and weight, in one allocation
	for i, w := range out.Weights {
		v := out.Votes[i]
		if v.Label == consensus.LabelCancelled || v.Label.Failed() && e.failures != consensus.FailuresNegative {
			continue
		}
		n++
		session := int64(call.runs[i].SessionID) // an abandoned replica's vote names none
		figures[2*i], figures[2*i+1] = rel.Of(session), w
		call.runs[i].Reliability, call.runs[i].Weight = &figures[2*i], &figures[2*i+1]
		// Only the weighted strategy weighs a vote by its confidence: a
		// median's weight is its session's reliability alone.
		if cs, ok := rel.Confidence[session]; ok && v.Confidence > 0 && out.Strategy == consensus.StrategyWeighted {
			call.runs[i].ConfidenceSlope = &cs
		}
	}
	call.block.Reputation = &ReputationSnapshot{Prior: rel.Of(0), Correlation: out.Correlation, Tempering: consensus.Tempering(n, out.Correlation)}
}

// CalibrationTier names the calibration map of the engine's weighted
// aggregation: a version 3 call under "weighted" states a confidence read
// on the map of this tier in its operation, learned from the outcomes
// reported through [Engine.Feedback].
const CalibrationTier = "weighted"

// calibrate sets the confidence of a weighted call to its calibrated
// number (see [ConsensusResponse]) and records its basis, which it
// returns: on m, the map the call read with its sessions' records (see
// [WithReading]), when it is of CalibrationTier, or else the one it
// reads. A store error is logged and leaves the number uncalibrated
// (consensus.Conservative).
func (e *Engine) calibrate(ctx context.Context, call *consensusCall, scope reputation.Scope, out consensus.Outcome, m *reputation.Calibration) *reputation.Basis {
	if out.Strategy != consensus.StrategyWeighted || out.Winner < 0 || ctx.Value(calibratesItselfKey{}) != nil {
		return nil
	}
	var y float64
	var basis reputation.Basis
	if m != nil && m.Tier == CalibrationTier {
		y, basis = m.Basis(out.Confidence, consensus.Conservative(out))
	} else {
		var err error
		if y, basis, err = e.rep.Calibrate(ctx, scope, CalibrationTier, out.Confidence, consensus.Conservative(out)); err != nil {
			e.log.Warn("router: reading the calibration map; the confidence is uncalibrated", "error", err)
		}
	}
	call.block.Confidence, call.block.Calibration = y, &basis
	return &basis
}

// learn teaches the engine's book the votes of a finished call in scope
// (at coincide, the coincidence of wrong answers the call read with its
// sessions' records; 0 when it read none, and the book reads it),
// under the call's context (a caller that gave up as the call ended may
// leave it untaught), unless its caller's share thins it out
// ([WithCallerShare]), and, when the call answered a verdict (answered:
// a return_all call without a strict majority answers none, and no
// report can say whether it was right), remembers it for feedback under
// its caller and ctx's trace id, with the basis of its confidence when
// it was weighted; a call that does not teach
// ([Teaches]) is neither learned nor remembered. A store error is
// logged: the call's answer does not depend on it.
func (e *Engine) learn(ctx context.Context, scope reputation.Scope, out consensus.Outcome, policy consensus.Policy, rel consensus.Reliabilities, basis *reputation.Basis, coincide float64, answered bool) {
	if e.rep == nil || !Teaches(ctx) || ctx.Value(learnsItselfKey{}) != nil {
		return
	}
	// A call of one replica has no agreement to teach, and its caller's
	// share counts only calls that do.
	if len(out.Votes) > 1 && e.Teach(ctx) {
		if err := e.rep.LearnAt(ctx, scope, out.Votes, policy, rel, coincide); err != nil {
			e.log.Warn("router: learning session reliabilities", "error", err)
		}
	}
	if id := TraceIDFrom(ctx); id != "" && out.Winner >= 0 && answered {
		c := reputation.Call{Scope: scope, Ballots: Ballots(out, policy.Key)}
		if basis != nil {
			c.Tier, c.Score, c.Conservative = CalibrationTier, basis.Uncalibrated, basis.Conservative
		}
		e.calls.PutCall(CallerFrom(ctx), id, c)
	}
}

// learnsItselfKey is the context key of WithoutLearning.
type learnsItselfKey struct{}

// WithoutLearning returns a copy of ctx under which the engine neither
// learns a call's votes nor remembers the call for feedback: its caller
// counts the answers by another key than the call's (a trust service
// that groups free text by meaning), and teaches the book and remembers
// the call itself.
func WithoutLearning(ctx context.Context) context.Context {
	return context.WithValue(ctx, learnsItselfKey{}, true)
}

// Teaches reports whether a call made under ctx teaches a reputation
// book, by its votes and by later reports of its outcome: an in-process
// call of the host does, and so does a call over HTTP by a caller that
// answers for it (a credential the Authenticator accepts, or a payment);
// a trial call (with a credential or without) and an anonymous call do
// not, since their callers choose both the claims and the sessions at no
// cost. trust.Service applies the same rule. What one caller teaches is
// bounded too: see [WithCallerShare].
func Teaches(ctx context.Context) bool { return httpapi.Accountable(ctx) }

// Ballots returns the ballots of out's cast votes for reputation
// feedback: each vote's session, whether it backed the winner under key
// (nil means consensus.DefaultKey), and whether it was the other verdict
// of a validation won by a verdict (reputation.Ballot.Opposed).
func Ballots(out consensus.Outcome, key func(any) (string, error)) []reputation.Ballot {
	backers := out.Backers(key)
	var bs []reputation.Ballot
	for i, v := range out.Votes {
		if v.Label == "" || v.Label == consensus.LabelCancelled || v.Label.Failed() {
			continue
		}
		backed := slices.Contains(backers, i)
		opposed := !backed && v.Answer == nil && verdict(v.Label) && verdict(out.Label) && v.Label != out.Label
		bs = append(bs, reputation.Ballot{Session: v.Session, Backed: backed, Confidence: v.Confidence, Opposed: opposed})
	}
	return bs
}

// verdict reports whether l is a verdict of a validation: VALID or
// INVALID.
func verdict(l consensus.Label) bool {
	return l == consensus.Label(VerdictValid) || l == consensus.Label(VerdictInvalid)
}

// Errors of [Engine.Feedback].
var (
	// ErrUnknownCall means the engine remembers no call of the caller's
	// with that trace id.
	ErrUnknownCall = errors.New("router: no call of the caller's with that trace id is remembered")
	// ErrReputationOff means the engine keeps no reputation
	// ([WithReputation]).
	ErrReputationOff = errors.New("router: this engine keeps no reputation")
)

// Feedback reports that the outcome of a version 3 call the engine
// decided, named by the trace id it ran under ([WithTraceID], or the
// request's traceparent), turned out right or wrong, as a marketplace
// dispute or a human review found; the engine's book learns it (see
// reputation.Book.Feedback).
//
// Only the call's caller may report on it: a trace id names a call
// together with the caller that made it ([CallerFrom] of the call's
// context and of ctx), since callers choose their trace ids; another
// caller's report, or one on a call the engine does not remember, gives
// ErrUnknownCall. A call's outcome counts once: a report that repeats
// the one before adds nothing, and one that says the opposite replaces
// it (reputation.Ledger.Report), whether it comes through Feedback or
// through a trust.Service over the engine, which records its calls in
// the same ledger ([Engine.Calls]). Reports are thinned as calls are
// ([WithCallerShare]): one of a caller above its share of the latest
// reports may be accepted and teach nothing. The engine remembers the latest
// [DefaultFeedbackMemory] calls that ran under a trace id and had a
// winner. With reputation off it returns ErrReputationOff. When the
// book's store fails (a database out of reach), nothing is recorded and
// it returns a 503 *Error with code unavailable wrapping the store's
// error: the same report may be made again. The outcome of a weighted
// call also teaches the calibration map of [CalibrationTier].
func (e *Engine) Feedback(ctx context.Context, traceID string, right bool) error {
	if e.rep == nil {
		return ErrReputationOff
	}
	caller := CallerFrom(ctx)
	unknown := fmt.Errorf("%w: %q", ErrUnknownCall, traceID)
	if _, _, ok := e.calls.Get(caller, traceID); !ok {
		return unknown
	}
	if !e.reported.admit(shareOwner(ctx)) {
		return nil
	}
	ok, err := e.calls.Report(ctx, e.rep, caller, traceID, right)
	switch {
	case !ok:
		return unknown // forgotten since
	case err == nil, ctx.Err() != nil, errors.Is(err, reputation.ErrInvalid):
		return err
	}
	// A store out of reach (a database that is down): nothing was
	// recorded, and the report may be made again. 503, which clients
	// retry, as for every store out of reach.
	return fmt.Errorf("%w: %w", problem.New(http.StatusServiceUnavailable, problem.CodeUnavailable,
		"the reputation store cannot be reached; retry later"), err)
}

// Calls returns the ledger of the calls the engine remembers for
// [Engine.Feedback], by caller and trace id. A trust.Service over the
// engine records its own calls there, so that a call is reported once
// through either.
func (e *Engine) Calls() *reputation.Ledger { return e.calls }

// usage counts the sessions of the latest runs.
type usage struct {
	mu     sync.Mutex
	ring   []SessionID
	next   int
	counts map[SessionID]int
}

// add counts a run of each of sessions, forgetting the oldest beyond
// the window.
func (u *usage) add(sessions []*session) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.counts == nil {
		u.counts = make(map[SessionID]int)
		u.ring = make([]SessionID, 0, DefaultShareWindow)
	}
	for _, s := range sessions {
		id := s.ID
		if len(u.ring) < cap(u.ring) {
			u.ring = append(u.ring, id)
		} else {
			old := u.ring[u.next]
			if u.counts[old]--; u.counts[old] == 0 {
				delete(u.counts, old)
			}
			u.ring[u.next] = id
			u.next = (u.next + 1) % len(u.ring)
		}
		u.counts[id]++
	}
}
