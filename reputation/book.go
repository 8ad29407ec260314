package reputation

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vouchkit/vouch/consensus"
)

// Defaults of a [Book].
const (
	// DefaultFeedbackWeight is how many votes' worth of evidence one
	// report of outside truth (Book.Feedback) adds to each session it
	// concerns: outside truth weighs more than agreement.
	DefaultFeedbackWeight = 4
	// DefaultCorrelationPrior is how many disagreements' worth of
	// evidence the correlation starts from, at 0: until the panel has
	// shown about that many, the votes are taken as independent.
	DefaultCorrelationPrior = 5
	// MaxCorrelation bounds the correlation a Book reports.
	MaxCorrelation = 0.9
)

// Options configure a [Book]. The zero Options takes every default.
type Options struct {
	// Prior is what a session's record starts from; the zero Prior
	// means DefaultOutcomePrior, or DefaultPrior with
	// LearnFromAgreement.
	Prior Prior
	// Horizon is the evidence a record keeps (see the package doc); 0
	// means DefaultHorizon.
	Horizon float64
	// FeedbackWeight is the evidence one report of outside truth adds; 0
	// means DefaultFeedbackWeight.
	FeedbackWeight float64
	// CalibrationPrior is k, the pseudo-outcomes each bin of a
	// calibration map starts from (see [Calibration]); 0 means
	// DefaultCalibrationPrior.
	CalibrationPrior float64
	// LeadLevel is the significance at which a session's record against
	// the other votes makes it the leader (see [Book.Leader]); 0 means
	// DefaultLeadLevel. At most MaxLeadLevel, 1/2, where a record leads once it has won
	// more disagreements than it lost.
	LeadLevel float64
	// LeadMargin is how far a session's reliability must stand above
	// every other session's for its record to lead at MaxLeadLevel, once
	// it has won two disagreements (see [Book.Leader]); 0 means
	// DefaultLeadMargin. At most 1, which no reliability clears: records
	// then lead at LeadLevel alone.
	LeadMargin float64
	// LearnFromAgreement makes Learn credit each session with the
	// probability, given the call's other votes, that its vote was
	// right (see the Book doc): agreement then moves reliabilities
	// before any outcome is reported. That estimate assumes the
	// sessions err independently; when two of them vote alike beyond
	// what their accuracies explain (two look-alike models), it learns
	// them as the reliable ones and a better session that disagrees
	// with them as the unreliable one. False, the default, leaves
	// reliabilities to reported outcomes (Feedback, Ledger.Report):
	// before any, every session weighs as the Prior, and the panel
	// weighs as an unweighted count would.
	LearnFromAgreement bool
	// ReportWindow is how long after a call (Call.At) a report on it
	// counts (see Ledger.Report); 0 means DefaultReportWindow. Books
	// that share a store must share it.
	ReportWindow time.Duration
}

// A Book learns how reliable each session is from the calls it votes in,
// and reads the reliabilities a call is weighed with. It keeps nothing
// itself: every record is in its Store, so Books over one Store (one per
// server) share what each learns. A Book is safe for concurrent use.
//
// # Reading
//
// A session's reliability in a scope is the mean of a Beta distribution
// whose counts are the scope's record and whose prior is the session's
// reliability one level wider, worth as many votes as the Prior: the
// session overall starts from the Prior, the operation from the session
// overall, the kind from the operation. The wider level is read from its
// evidence outside the narrower scope (its record less the narrower one),
// since every vote is added at each level: a vote counts once. This holds
// while the records are within their horizon (Options.Horizon): each
// level forgets on its own, so once a wider record is full its record
// less the narrower one undercounts the evidence outside, and a report
// can then move a reliability slightly the other way (by up to about
// 0.003 per report in the range 0.4 to 0.95, measured on random
// histories; further out, after one scope's record is full of wrong
// reports, a wrong report in another scope can raise a reliability near
// 0.02). A session
// with no record reads the Prior's mean; one call in which a session's vote
// was right with probability 0.2 reads (4+0.2)/(5+1) = 0.7 under the
// default Prior, in any scope.
//
// The correlation ρ of the panel's errors is 1 - observed/expected, where
// observed counts how often two votes of one call disagreed, and expected
// how often they would have if they were independent with the
// reliabilities the Book held (p_i(1-p_j) + (1-p_i)p_j for a pair), each
// count averaged over the pairs of a call and starting at
// DefaultCorrelationPrior; it is clamped to [0, MaxCorrelation]. For two
// voters of equal reliability whose errors correlate by ρ, observed /
// expected is 1 - ρ. Votes that agree more often than their
// reliabilities predict share their errors, and carry less evidence.
//
// # Learning
//
// A session's reliability is learned from reported outcomes: agreement
// alone never moves it. Feedback takes what the host learned
// afterwards: that the outcome a call reported was right, or wrong. Each
// session that backed the outcome is credited FeedbackWeight votes' worth
// of Right (or Wrong), and each that voted otherwise the opposite when
// the outcome was right. When it was wrong, a vote for the one other
// answer the call could have (Ballot.Opposed: a validation's other
// verdict) was right and is credited Right; any other dissent, such as
// another wrong number, is not known to have been right, and its session
// is left as it was.
//
// The reliability in a scope therefore converges to the share of a
// session's counted votes that were right, where every vote on a
// validation counts: its accuracy on the reported calls, whether it
// backs the majority or dissents rightly from it. On open answers a
// dissent from a wrong outcome does not count, and a session that often
// dissents rightly from a wrong plurality reads somewhat less than its
// accuracy. Once the record is full (see the package doc) it is an
// average over about the last
// Horizon/FeedbackWeight reported calls the session voted in (125 with
// the defaults), and the Prior weighs as Prior.Right+Prior.Wrong votes,
// ten outcomes with the defaults (DefaultOutcomePrior). To rank a
// session right 68% of the time above one right 40% of the time, with
// probability 0.95, takes
// about 20 outcomes reported on calls both voted in (independent errors:
// the first's count of right votes exceeds the second's with probability
// 0.952 after 20, 0.927 after 16, 0.982 after 30).
//
// Learn takes a call's votes: with fewer than two votes cast it learns
// nothing (a session cannot agree with itself). Otherwise it adds one
// vote of evidence to each voter's confidence slope (see the package
// doc). With Options.LearnFromAgreement, each cast vote's session is also credited
// with the probability, given every vote and the reliabilities the call
// was weighed with, that its answer is right (consensus.Beliefs): Right
// grows by that probability and Wrong by the rest. This is online
// Dawid–Skene estimation with one reliability per session; it assumes
// that the sessions err independently, and learns a clique of
// look-alikes, which is the majority, as the reliable sessions. Each
// call then also adds one unit of evidence to the panel's record (see
// Reading); without LearnFromAgreement the panel's correlation stays 0.
type Book struct {
	store   Store
	opts    Options
	calKeys sync.Map     // the keys of each calibration map, by operation and tier
	keyBufs sync.Pool    // of *[]Key: the keys of a read, which no Store keeps
	addBufs sync.Pool    // of *[]Delta: Learn's deltas, which no Store keeps
	swept   atomic.Int64 // the week through whose calls what was reported is forgotten
}

// New returns a Book over store (nil means a new Memory) with o. It
// returns an error wrapping ErrInvalid for an option out of range.
func New(store Store, o Options) (*Book, error) {
	if store == nil {
		store = new(Memory)
	}
	if o.Prior == (Prior{}) {
		o.Prior = DefaultOutcomePrior()
		if o.LearnFromAgreement {
			o.Prior = DefaultPrior()
		}
	}
	if err := o.Prior.check(); err != nil {
		return nil, err
	}
	if o.Horizon == 0 {
		o.Horizon = DefaultHorizon
	}
	if err := checkHorizon(o.Horizon); err != nil {
		return nil, err
	}
	if o.FeedbackWeight == 0 {
		o.FeedbackWeight = DefaultFeedbackWeight
	}
	if !(o.FeedbackWeight > 0 && o.FeedbackWeight <= MaxCount) {
		return nil, fmt.Errorf("%w: feedback weight %v is not a positive number up to %g", ErrInvalid, o.FeedbackWeight, MaxCount)
	}
	if o.LeadLevel == 0 {
		o.LeadLevel = DefaultLeadLevel
	}
	if !(o.LeadLevel > 0 && o.LeadLevel <= MaxLeadLevel) {
		return nil, fmt.Errorf("%w: lead level %v is not a number in (0, 1/2]", ErrInvalid, o.LeadLevel)
	}
	if o.LeadMargin == 0 {
		o.LeadMargin = DefaultLeadMargin
	}
	if !(o.LeadMargin > 0 && o.LeadMargin <= 1) {
		return nil, fmt.Errorf("%w: lead margin %v is not a number in (0, 1]", ErrInvalid, o.LeadMargin)
	}
	if o.CalibrationPrior == 0 {
		o.CalibrationPrior = DefaultCalibrationPrior
	}
	if !(o.CalibrationPrior > 0 && o.CalibrationPrior <= MaxCount) {
		return nil, fmt.Errorf("%w: calibration prior %v is not a positive number up to %g", ErrInvalid, o.CalibrationPrior, MaxCount)
	}
	if o.ReportWindow == 0 {
		o.ReportWindow = DefaultReportWindow
	}
	if o.ReportWindow < 0 {
		return nil, fmt.Errorf("%w: report window %v is negative", ErrInvalid, o.ReportWindow)
	}
	return &Book{store: store, opts: o}, nil
}

// Options returns the Book's options, defaults filled in.
func (b *Book) Options() Options { return b.opts }

// Reliabilities returns what a call in scope over sessions is weighed
// with: each session's reliability, the Prior's mean for any other, and
// the panel's correlation (see the Book doc).
func (b *Book) Reliabilities(ctx context.Context, scope Scope, sessions []int64) (consensus.Reliabilities, error) {
	rel, _, err := b.Evidence(ctx, scope, sessions)
	return rel, err
}

// Evidence returns what Reliabilities returns and, for each session, the
// counts of the Beta distribution its reliability is the mean of: its
// record in scope plus the prior it reads from the wider levels, worth as
// many votes as the Prior. Their sum says how sure the reliability is: a
// session never seen holds the Prior's counts. A session that is not
// positive is refused with an error wrapping ErrInvalid (CheckSessions):
// 0 names the panel's records (PanelSession), which are no session's.
func (b *Book) Evidence(ctx context.Context, scope Scope, sessions []int64) (consensus.Reliabilities, map[int64]Record, error) {
	if err := scope.check(); err != nil {
		return consensus.Reliabilities{}, nil, err
	}
	if err := CheckSessions(sessions); err != nil {
		return consensus.Reliabilities{}, nil, err
	}
	buf := pooled[Key](&b.keyBufs)
	defer b.keyBufs.Put(buf)
	*buf = evidenceKeys((*buf)[:0], scope, sessions)
	recs, err := b.store.Load(ctx, *buf)
	if err != nil {
		return consensus.Reliabilities{}, nil, err
	}
	rel, counts := b.evidenceOf(scope, sessions, recs)
	return rel, counts, nil
}

// evidenceKeys appends to dst the keys Evidence reads: each session's
// records at every level of scope, the panel's record, then each
// session's confidence records.
func evidenceKeys(dst []Key, scope Scope, sessions []int64) []Key {
	for _, s := range sessions {
		dst = scope.appendKeys(dst, s)
	}
	dst = append(dst, scope.panel())
	for _, s := range sessions {
		dst = slopeKeys(dst, scope, s)
	}
	return dst
}

// evidenceOf returns what Evidence returns from recs, the records of
// evidenceKeys.
func (b *Book) evidenceOf(scope Scope, sessions []int64, recs []Record) (consensus.Reliabilities, map[int64]Record) {
	levels := scope.levels()
	rel := consensus.Reliabilities{Sessions: make(map[int64]float64, len(sessions)), Prior: b.opts.Prior.Mean()}
	counts := make(map[int64]Record, len(sessions))
	strength := b.opts.Prior.Right + b.opts.Prior.Wrong
	i := 0
	for _, s := range sessions {
		rel.Sessions[s], counts[s] = nested(recs[i:i+levels], rel.Prior, strength)
		i += levels
	}
	rel.Correlation = correlation(recs[i])
	i++
	for _, s := range sessions {
		if cs := slopeOf(recs[i : i+len(slopeKinds)]); cs.Slope != 0 {
			if rel.Confidence == nil {
				rel.Confidence = make(map[int64]consensus.ConfidenceSlope, len(sessions))
			}
			rel.Confidence[s] = cs
		}
		i += len(slopeKinds)
	}
	return rel, counts
}

// nested reads a session's reliability from its records, widest first
// (session, operation, kind), and the counts of the Beta distribution
// whose mean it is. Each level's prior is the reliability one level wider read
// from the evidence of that level that the narrower one does not hold: a
// vote counted at every level (as Learn counts it) is evidence once, so a
// session seen in one scope only reads, there, its record over the Prior,
// and a scope with no record of its own reads the wider one's.
func nested(recs []Record, prior, strength float64) (float64, Record) {
	q := prior // the prior mean of the current level
	for j := 1; j < len(recs); j++ {
		w, n := recs[j-1], recs[j]
		right, wrong := max(w.Right-n.Right, 0), max(w.Wrong-n.Wrong, 0)
		q = (right + strength*q) / (right + wrong + strength)
	}
	r := recs[len(recs)-1]
	return (r.Right + strength*q) / (r.Right + r.Wrong + strength), Record{Right: r.Right + strength*q, Wrong: r.Wrong + strength*(1-q)}
}

// correlation reads the panel's record.
func correlation(r Record) float64 {
	rho := 1 - (r.Wrong+DefaultCorrelationPrior)/(r.Right+DefaultCorrelationPrior)
	return min(max(rho, 0), MaxCorrelation)
}

// Learn learns from the votes of one call in scope, counted under policy
// (whose Key groups the answers), given rel, the reliabilities the call
// was weighed with (as Reliabilities returned them). A call on an open
// question also refines the scope's coincidence of wrong answers, which
// Learn reads; a caller that read it with the call uses LearnAt. See
// the Book doc.
func (b *Book) Learn(ctx context.Context, scope Scope, votes []consensus.Vote, policy consensus.Policy, rel consensus.Reliabilities) error {
	return b.LearnAt(ctx, scope, votes, policy, rel, 0)
}

// LearnAt is Learn for a call that read its scope's coincidence of
// wrong answers with the rest (Coincidence, Snapshot.Coincidence) as
// coincide: a call on an open question refines that figure from it,
// with no read of its own. A coincide of 0 means not read (a learned
// figure never is 0): LearnAt then reads it, as Learn does. Any other
// call ignores coincide.
func (b *Book) LearnAt(ctx context.Context, scope Scope, votes []consensus.Vote, policy consensus.Policy, rel consensus.Reliabilities, coincide float64) error {
	if err := scope.check(); err != nil {
		return err
	}
	for i, v := range votes {
		if v.Session <= 0 && !notCast(v) {
			return fmt.Errorf("%w: votes[%d]: session %d is not positive", ErrInvalid, i, v.Session)
		}
	}
	if coincide == 0 && openQuestion(votes) {
		c, err := b.Coincidence(ctx, scope)
		if err != nil {
			return err
		}
		coincide = c
	}
	buf := pooled[Delta](&b.addBufs)
	defer b.addBufs.Put(buf)
	deltas, err := b.deltas((*buf)[:0], scope, votes, policy, rel, coincide)
	*buf = deltas
	if err != nil || len(deltas) == 0 {
		return err
	}
	return b.store.Add(ctx, b.opts.Horizon, deltas)
}

// pooled returns a buffer of p, or a new one when p holds none.
func pooled[T any](p *sync.Pool) *[]T {
	if buf, ok := p.Get().(*[]T); ok {
		return buf
	}
	return new([]T)
}

// deltas appends to dst the evidence LearnAt adds.
func (b *Book) deltas(dst []Delta, scope Scope, votes []consensus.Vote, policy consensus.Policy, rel consensus.Reliabilities, coincide float64) ([]Delta, error) {
	cast := votes
	if slices.ContainsFunc(votes, notCast) {
		var buf [8]consensus.Vote // room enough for most calls
		cast = buf[:0]
		for _, v := range votes {
			if !notCast(v) {
				cast = append(cast, v)
			}
		}
	}
	if len(cast) < 2 {
		return dst, nil
	}
	independent := rel
	independent.Correlation = 0
	policy.Failures = consensus.FailuresNonVotes
	beliefs, member, err := consensus.Beliefs(cast, policy, independent)
	if err != nil {
		return nil, err
	}
	deltas := coincidenceDelta(dst, scope, cast, member, independent, coincide)
	if b.opts.LearnFromAgreement {
		var keys [3]Key
		for i, v := range cast {
			for _, k := range scope.appendKeys(keys[:0], v.Session) {
				deltas = append(deltas, Delta{Key: k, Delta: Record{Right: beliefs[i], Wrong: 1 - beliefs[i]}})
			}
		}
	}
	// The panel: each pair of votes, as it agreed against how often
	// independent voters of these reliabilities would. Only reliabilities
	// learned from agreement are known on every call; read from the
	// Prior, they would count a panel better than it as correlated.
	if !b.opts.LearnFromAgreement {
		return b.slopes(deltas, scope, cast, member, independent), nil
	}
	var panel Record
	for i := range cast {
		pi := min(max(independent.Of(cast[i].Session), 0.5), consensus.MaxReliability)
		for j := i + 1; j < len(cast); j++ {
			pj := min(max(independent.Of(cast[j].Session), 0.5), consensus.MaxReliability)
			panel.Right += pi*(1-pj) + (1-pi)*pj
			if member[i] != member[j] {
				panel.Wrong++
			}
		}
	}
	pairs := float64(len(cast) * (len(cast) - 1) / 2) // one call weighs one unit
	panel.Right /= pairs
	panel.Wrong /= pairs
	deltas = append(deltas, Delta{Key: scope.panel(), Delta: panel})
	return b.slopes(deltas, scope, cast, member, independent), nil
}

// slopes appends to dst the evidence of the cast votes' confidence
// slopes: each vote, by its reported confidence, right with the
// probability the other votes, of groups member, give its answer.
func (b *Book) slopes(deltas []Delta, scope Scope, cast []consensus.Vote, member []int, independent consensus.Reliabilities) []Delta {
	var scoreBuf, weightBuf [8]float64 // room enough for most calls
	scores := slices.Grow(scoreBuf[:0], len(cast))[:len(cast)]
	weights := slices.Grow(weightBuf[:0], len(cast))[:len(cast)]
	for i, v := range cast {
		weights[i] = independent.Evidence(v)
		scores[member[i]] += weights[i]
	}
	groups := slices.Max(member) + 1
	for i, v := range cast {
		scores[member[i]] -= weights[i]
		y := consensus.Credence(scores[:groups], member[i], 1)
		scores[member[i]] += weights[i]
		deltas = slopeDeltas(deltas, scope, v.Session, v.Confidence, y, 1)
	}
	return deltas
}

// notCast reports a vote that was not cast: of no label, cancelled or
// failed.
func notCast(v consensus.Vote) bool {
	return v.Label == "" || v.Label == consensus.LabelCancelled || v.Label.Failed()
}

// Feedback learns that the outcome of a call in scope, in which ballots
// were cast, was right (or wrong): see the Book doc. Ballots of failed or
// cancelled runs are to be left out. A ballot of a session that is not
// positive is refused with an error wrapping ErrInvalid, as are the cast
// votes of such a session by Learn and the sessions of Forget: 0 names
// the panel's records (PanelSession).
func (b *Book) Feedback(ctx context.Context, scope Scope, ballots []Ballot, right bool) error {
	if err := scope.check(); err != nil {
		return err
	}
	if err := checkBallots(ballots); err != nil {
		return err
	}
	deltas := b.feedbackDeltas(scope, ballots, right, 1)
	if len(deltas) == 0 {
		return nil
	}
	return b.store.Add(ctx, b.opts.Horizon, deltas)
}

// feedbackDeltas returns the evidence Feedback adds, each count
// multiplied by sign (-1 withdraws it).
func (b *Book) feedbackDeltas(scope Scope, ballots []Ballot, right bool, sign float64) []Delta {
	w := sign * b.opts.FeedbackWeight
	var deltas []Delta
	for _, bl := range ballots {
		var d Record
		switch {
		case bl.Taught:
			continue
		case right && bl.Backed, bl.Opposed && !right: // a backer of a right outcome; the other verdict of a wrong one
			d.Right = w
		case right, bl.Backed: // a dissent from a right outcome, a backer of a wrong one
			d.Wrong = w
		default: // a dissent from a wrong outcome, of another answer: not known to be right
			continue
		}
		var keys [3]Key
		for _, k := range scope.appendKeys(keys[:0], bl.Session) {
			deltas = append(deltas, Delta{Key: k, Delta: d})
		}
		deltas = slopeDeltas(deltas, scope, bl.Session, bl.Confidence, d.Right/(d.Right+d.Wrong), w)
	}
	for i := range ballots {
		if d, ok := leadDelta(scope, ballots, i, right, sign); ok {
			deltas = append(deltas, d)
		}
	}
	return deltas
}
