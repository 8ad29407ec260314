package trust

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"time"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust/internal/decide"
)

// DefaultWeightedStopThreshold is the confidence at which adaptive stops
// when votes are weighted by reputation: the probability that the answer
// is right, read on the calibration map of adaptive calls once outcomes
// were reported, else under the weighted model (two agreeing votes of
// sessions right 90% of the time reach it, 0.988; two of sessions right
// 80% of the time do not, 0.941). Adaptive also stops below it under
// DefaultFlipBound.
const DefaultWeightedStopThreshold = 0.97

// DefaultFlipBound is the chance, below which adaptive also stops when
// votes are weighted by reputation, that the runs left could turn the
// verdict of at least two agreeing votes (consensus.Stop.Flip). The
// chance is computed as if the runs left erred independently; on real
// panels, whose models share their mistakes, it overstates how often more
// runs turn a verdict. docs/ACCURACY.md ("Variants measured and not
// kept") compares 0.2 with 0.3 on real answers, and its "How to rerun"
// gives the command.
const DefaultFlipBound = 0.2

// keeper is a router that learns session reliabilities: the in-process
// router.Engine.
type keeper interface {
	Reputation() *reputation.Book
	Order(ids []router.SessionID, rel consensus.Reliabilities, evidence map[int64]reputation.Record) []router.SessionID
	Calls() *reputation.Ledger
	Teach(ctx context.Context) bool
	Feedback(ctx context.Context, traceID string, right bool) error
}

// WithoutReputation makes the service count every run the same, as it
// did before reputation: majority tallies with consensus.Posterior as
// confidence, adaptive's sessions in rotation, nothing learned. Without
// it, a service over a router that keeps reputation (a router.Engine
// built without router.WithReputation(nil)) weighs votes by it.
func WithoutReputation() Option {
	return func(s *Service) error { s.noRep = true; return nil }
}

// ErrReputationOff is the error of Feedback on a service that keeps no
// reputation.
var ErrReputationOff = errors.New("trust: this service weighs no votes by reputation")

// ErrUnknownCall is the error of Feedback for an id that names no call
// the service remembers and no receipt of the caller's.
var ErrUnknownCall = errors.New("trust: no such call")

// ErrReceiptWithoutVotes is the error of Feedback for the receipt_id of
// a receipt of the caller's that does not record which sessions voted
// and which agreed: one issued without its consensus snapshot or its
// router references (receipt.Include's ConsensusSnapshot and
// RouterTraceRefs). The call is reported by its trace_id instead. It
// wraps ErrUnknownCall.
var ErrReceiptWithoutVotes = fmt.Errorf("%w: the receipt does not record which sessions voted and which agreed", ErrUnknownCall)

// useReputation sets s.keep when the router keeps reputation and s may
// use it.
func (s *Service) useReputation() {
	if k, ok := s.router.(keeper); ok && !s.noRep && k.Reputation() != nil {
		s.keep = k
		if !s.noExams {
			s.exams = newExams(router.DefaultFeedbackMemory)
		}
	}
}

// scope is the reputation scope of req's router calls: a validation's
// claim type names it, and a delegation's, whose router requests name no
// claim type, the service names (router.WithScope).
func scope(req *Request) reputation.Scope {
	kind := router.KindValidate
	if req.Mode == ModeDelegation {
		kind = router.KindDelegate
	}
	return router.Scope(kind, req.Task.Type)
}

// lastSnapshot returns the reputation snapshot of the latest step that
// has one.
func lastSnapshot(steps []stepResult) *router.ReputationSnapshot {
	for i := len(steps) - 1; i >= 0; i-- {
		if c := steps[i].consensus; c != nil && c.Reputation != nil {
			return c.Reputation
		}
	}
	return nil
}

// rankable returns the ids of adaptive's candidates that reputation
// ranks: every one but the single session, which stays first.
func (s *Service) rankable(cands []candidate) []int64 {
	if s.keep == nil || len(cands) < 2 {
		return nil
	}
	from := 0
	if s.session != 0 && cands[0].id == s.session {
		from = 1
	}
	ids := make([]int64, 0, len(cands)-from)
	for _, c := range cands[from:] {
		ids = append(ids, int64(c.id))
	}
	return ids
}

// ranked orders adaptive's candidates by the router's reputation
// (router.Engine.Order), on the reliabilities cals read of the rankable
// ones, keeping the single session first, and returns those
// reliabilities. With no reputation, or when the store failed (cals nil),
// the candidates keep their rotation.
func (s *Service) ranked(cands []candidate, cals *scopeReading) ([]candidate, consensus.Reliabilities) {
	ids := s.rankable(cands)
	if cals == nil || len(ids) == 0 {
		return cands, consensus.Reliabilities{}
	}
	from := len(cands) - len(ids)
	sids := make([]router.SessionID, len(ids))
	for i, id := range ids {
		sids[i] = router.SessionID(id)
	}
	out := slices.Clone(cands[:from])
	for _, id := range s.keep.Order(sids, cals.rel, cals.evidence) {
		i := slices.IndexFunc(cands[from:], func(c candidate) bool { return c.id == id })
		out = append(out, cands[from+i])
	}
	return out, cals.rel
}

// nextWeight is the weight adaptive's stopping rule expects of the next
// run: that of the first unused candidate, or the prior's.
func nextWeight(cands []candidate, used map[router.SessionID]bool, rel consensus.Reliabilities) float64 {
	for _, c := range cands {
		if !used[c.id] {
			return consensus.Weight(rel.Of(int64(c.id)))
		}
	}
	return consensus.Weight(rel.Of(0))
}

// learn teaches the router's book what the pooled votes of an adaptive
// call or an exam say, and the votes of a call grouped by meaning
// counted by their groups (the router learned the other calls itself),
// unless the
// call does not teach (router.Teaches: a trial or anonymous call) or its
// caller's share of the router's latest teaching calls thins it out
// (router.Engine.Teach), and remembers every call that teaches for
// Feedback in the router's ledger, under its caller and trace id, in
// place of the router calls it made. cals is what the call read, if
// anything: an open answer learns at the coincidence it was read with.
// at is when the call was decided, as its receipt records it.
func (s *Service) learn(ctx context.Context, req *Request, final stepResult, steps []stepResult, traceID string, cals *scopeReading, at time.Time) {
	if s.keep == nil || !router.Teaches(ctx) {
		return
	}
	sc := scope(req)
	if (req.Policy == PolicyAdaptive || isExam(ctx) || s.groups(req)) && len(final.out.Votes) > 1 && s.keep.Teach(ctx) {
		lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		defer cancel()
		rel := decide.Reliabilities(final.runs, lastSnapshot(steps))
		if err := s.keep.Reputation().LearnAt(lctx, sc, final.out.Votes, consensus.Policy{Key: final.key}, rel, cals.handedCoincidence()); err != nil {
			s.logger.WarnContext(ctx, "trust: learning session reliabilities", "error", err)
		}
	}
	if final.out.Winner >= 0 {
		c := reputation.Call{Scope: sc, Ballots: checkBallots(router.Ballots(final.out, final.key), steps, final.out.Label), At: at}
		if req.Mode != ModeDelegation && twoVerdicts(final.out.Label) {
			c.Label = string(final.out.Label) // what FeedbackVerdict reads the true verdict against
		}
		if b := final.calibration; b != nil {
			c.Tier, c.Score, c.Conservative = b.Tier, b.Uncalibrated, b.Conservative
		}
		s.keep.Calls().PutCall(CallerFrom(ctx), traceID, c)
		s.remember(ctx, req, traceID)
	}
}

// Feedback reports that the outcome of a call this service decided turned
// out right or wrong, as a marketplace dispute or a human review found:
// the router's reputation book learns it, weighing it more than the
// agreement of the votes (reputation.Book.Feedback). id is the call's
// trace_id (the service remembers its latest 10,000 calls) or the
// receipt_id of its receipt, whose consensus snapshot names the sessions
// and which of them agreed.
//
// Only the call's caller (CallerFrom(ctx), who owns its receipt) may
// report on it: a trace id names a call together with its caller, since
// callers choose their trace ids. A call's outcome counts once, whichever
// way it is named and whether it is reported here or through the
// router.Engine the service runs on: a report that repeats the one before
// adds nothing, one that says the opposite replaces it
// (reputation.Ledger.Report). A report on a receipt whose trace id the
// caller reused for a later call lands on the receipt's call, not the
// later one (unless both name the same sessions, backing alike), and
// counts once with a report on that call by its trace id made before
// the reuse, on this server or another sharing the book. It
// returns ErrUnknownCall for anything
// else (another caller's call among them), ErrReputationOff when the
// service weighs no votes by reputation, and, for a receipt id when the
// receipt store fails (a database out of reach), or for any id when the
// reputation book's store does, a 503 *Error with code unavailable
// wrapping the store's error. The outcome also teaches the
// calibration map of the call's tier (and verdict, for a validation), at
// the call's score and conservative number (reputation.Basis). On a
// validation that answered VALID or INVALID the report says the claim's
// true verdict, and examines the claim as FeedbackVerdict does.
func (s *Service) Feedback(ctx context.Context, id string, right bool) error {
	var verdict router.Verdict
	landed, err := s.report(ctx, id, func(c reputation.Call) (bool, bool) {
		verdict = trueVerdict(c.Label, right)
		return right, true
	})
	if err != nil || verdict == "" {
		return err
	}
	return s.examine(ctx, landed, verdict)
}

// FeedbackVerdict reports the true verdict of a validation this service
// decided: that the claim of the call named by id (its trace_id or the
// receipt_id of its receipt, as for Feedback) turned out to hold
// (router.VerdictValid) or not (router.VerdictInvalid), whatever the
// call answered. It is how a host reports a claim whose call answered
// RETRY, which Feedback cannot: the outcome says nothing of an answer
// that was never given, but the claim's verdict still shows which votes
// were right. The call's votes then teach as a reported answer's do
// (see Feedback): the sessions that voted the verdict were right, the
// others wrong, and the calibration map of the call's tier and leading
// verdict counts one outcome, right when its weighted tally leaned to
// the verdict. On a call answered VALID or INVALID it is Feedback, right
// when the answer is the verdict, and the two count as one report: a
// repeat adds nothing, the opposite replaces it.
//
// It returns ErrUnknownCall for an id that names no validation of the
// caller's the service remembers (a delegation, another caller's call,
// a call whose votes tied), ErrReputationOff when the service weighs no
// votes by reputation, and an error for a verdict other than the two.
//
// The report then examines the claim, once per call (see the package
// doc, Outcomes; WithoutExams turns it off): the service asks it of the
// pool again at the oracle tier and reports the verdict on that exam
// too, where each session the call ran learns nothing a second time
// (reputation.Call.Again). When the exam fails (every run it asked
// failed), the error wraps ErrExam: the report stands, and making it
// again runs the exam again. An exam is up to four runs of the host's
// workers that no call pays for (five when the call's own runs failed):
// where callers report their own outcomes (the feedback route of
// NewHandler, and the MCP door's tool), each reported call may cost the
// host that many runs more than the caller paid for.
func (s *Service) FeedbackVerdict(ctx context.Context, id string, verdict router.Verdict) error {
	if verdict != router.VerdictValid && verdict != router.VerdictInvalid {
		return fmt.Errorf("trust: a true verdict is VALID or INVALID, not %q", verdict)
	}
	landed, err := s.report(ctx, id, against(verdict))
	if err != nil {
		return err
	}
	return s.examine(ctx, landed, verdict)
}

// report reports on the call of the caller's named by id, a trace id the
// ledger remembers or a receipt id, what rightOf reads of it: whether the
// answer it decided was right, and false when it has no outcome to
// report (ErrUnknownCall). The call is read once, from the ledger or from
// its receipt. landed is the trace id the report landed on: the call's,
// or "receipt:" and id for a receipt whose trace id the caller reused.
func (s *Service) report(ctx context.Context, id string, rightOf func(reputation.Call) (right, ok bool)) (landed string, err error) {
	if s.keep == nil {
		return "", ErrReputationOff
	}
	none := fmt.Errorf("%w: %q names no call of this caller's with an outcome to report", ErrUnknownCall, id)
	if c, kept := s.keep.Calls().Call(CallerFrom(ctx), id); kept {
		right, ok := rightOf(c)
		if !ok {
			return "", none
		}
		// The router reports, so that its bound on each caller's share
		// of the reports (router.WithCallerShare) holds here too.
		if err := s.keep.Feedback(ctx, id, right); !errors.Is(err, router.ErrUnknownCall) {
			return id, err
		}
	}
	traceID, c, err := s.receiptCall(ctx, id)
	if err != nil {
		return "", err
	}
	right, ok := rightOf(c)
	if !ok {
		return "", none
	}
	// The call is reported under its trace id, so that its report by
	// trace id and by receipt id count once; but when the caller reused
	// the trace id for a later call that is remembered, under the
	// receipt's own name, so that the report lands on the receipt's call.
	if later, ok := s.keep.Calls().Call(CallerFrom(ctx), traceID); ok && !sameVoters(later.Ballots, c.Ballots) {
		// Its report is still kept under its trace id, so that a
		// report made by that name before the reuse counts once with
		// this one.
		c.ID = traceID
		traceID = "receipt:" + id
	}
	s.keep.Calls().KeepCall(CallerFrom(ctx), traceID, c)
	if err = s.keep.Feedback(ctx, traceID, right); errors.Is(err, router.ErrUnknownCall) {
		return "", fmt.Errorf("%w: %q", ErrUnknownCall, id) // forgotten at once
	}
	return traceID, err
}

// receiptCall reads the call of receipt id, which must be the caller's
// and live by the service's clock, the Issuer's, which dated it
// (ErrUnknownCall for an id that is no receipt id, read nowhere):
// the trace id it ran under ("receipt:" and id when it names none), its
// scope, when it was decided, its ballots and the calibration basis its
// policy snapshot records.
func (s *Service) receiptCall(ctx context.Context, id string) (traceID string, c reputation.Call, err error) {
	unknown := fmt.Errorf("%w: %q", ErrUnknownCall, id)
	// A trace id, or anything else that is no receipt id, names no
	// receipt: the store is not asked, whatever its state.
	if s.issuer == nil || s.issuer.Store == nil || !receipt.ValidID(id) {
		return "", c, unknown
	}
	rec, err := s.issuer.Store.Get(ctx, id, s.now()) // on the clock that dated the receipt
	if errors.Is(err, receipt.ErrNotFound) || err == nil && rec.Owner != CallerFrom(ctx) {
		return "", c, unknown
	}
	if err != nil {
		if ctx.Err() != nil {
			return "", c, err
		}
		// A store out of reach (a database that is down): 503, which
		// clients retry, as the receipt routes answer it.
		return "", c, fmt.Errorf("%w: %w", problem.New(http.StatusServiceUnavailable, problem.CodeUnavailable,
			"the receipt store cannot be reached; retry later"), err)
	}
	r, err := receipt.Parse(rec.Data)
	if err != nil {
		return "", c, err
	}
	cs := r.ConsensusSnapshot
	if cs == nil || r.CortensorRefs == nil || len(r.CortensorRefs.Sessions) != len(cs.Verdicts) || len(cs.Agreeing) == 0 {
		return "", c, fmt.Errorf("%w: receipt %q", ErrReceiptWithoutVotes, id)
	}
	traceID = "receipt:" + id
	if ids := r.CortensorRefs.RouterTraceIDs; len(ids) > 0 && ids[0] != "" {
		traceID = ids[0]
	}
	kind := router.KindValidate
	if r.Mode == string(ModeDelegation) {
		kind = router.KindDelegate
	}
	c.Scope = router.Scope(kind, r.TaskMeta.Type)
	if c.At, err = r.IssuedAt(); err != nil {
		return "", c, err
	}
	for i, v := range cs.Verdicts {
		l := consensus.Label(v)
		if l == consensus.LabelCancelled || l.Failed() {
			continue
		}
		backed := slices.Contains(cs.Agreeing, i)
		won := consensus.Label(cs.Verdicts[cs.Agreeing[0]])
		opposed := !backed && r.Mode != string(ModeDelegation) && twoVerdicts(l, won) && l != won
		c.Ballots = append(c.Ballots, reputation.Ballot{Session: r.CortensorRefs.Sessions[i], Backed: backed, Opposed: opposed})
	}
	if won := consensus.Label(cs.Verdicts[cs.Agreeing[0]]); r.Mode != string(ModeDelegation) && twoVerdicts(won) {
		c.Label = string(won)
	}
	if p := r.PolicySnapshot; p != nil && p.Calibration != nil {
		c.Tier, c.Score, c.Conservative = p.Calibration.Tier, p.Calibration.Uncalibrated, p.Calibration.Conservative
		if p.Calibration.Conservative == 0 { // a receipt issued before it was recorded, when the score was the conservative number
			c.Conservative = c.Score
		}
	}
	return traceID, c, nil
}

// sameVoters reports whether two calls' ballots name the same sessions,
// each backing the winner or not, in the same order, leaving out the
// ballots of checks (reputation.Ballot.Check), which a receipt does not
// record.
func sameVoters(a, b []reputation.Ballot) bool {
	check := func(bl reputation.Ballot) bool { return bl.Check }
	a = slices.DeleteFunc(slices.Clone(a), check)
	b = slices.DeleteFunc(slices.Clone(b), check)
	return slices.EqualFunc(a, b, func(x, y reputation.Ballot) bool { return x.Session == y.Session && x.Backed == y.Backed })
}

// twoVerdicts reports whether every label is VALID or INVALID, the two
// answers of a validation.
func twoVerdicts(labels ...consensus.Label) bool {
	for _, l := range labels {
		if l != consensus.Label(router.VerdictValid) && l != consensus.Label(router.VerdictInvalid) {
			return false
		}
	}
	return true
}
