package reputation

import (
	"context"
	"math"
	"slices"

	"github.com/vouchkit/vouch/consensus"
)

// DefaultLeadLevel is the significance at which a session's record
// against the other votes of its calls makes it the leader (see
// [Book.Leader]) unless Options.LeadLevel says otherwise: the chance,
// were the session no better than the majority of the others, that it
// would have won its disagreements with them as often as it did. 1/8 is
// the chance of three wins in three disagreements: the shortest record
// that leads.
const DefaultLeadLevel = 1.0 / 8

// MaxLeadLevel is the largest lead level a Book takes
// (Options.LeadLevel): at 1/2 a record leads once it has won more
// disagreements than it lost; above it, a record that lost as many as it
// won would lead.
const MaxLeadLevel = 1.0 / 2

// DefaultLeadMargin is how far a session's reliability must stand above
// every other session's for its record to lead at MaxLeadLevel rather
// than at the Book's lead level (see [Book.Leader]), unless
// Options.LeadMargin says otherwise.
const DefaultLeadMargin = 0.05

// MarginWins is the fewest disagreements a record must have won to lead
// at MaxLeadLevel by its session's margin (Options.LeadMargin): one
// report never makes a leader.
const MarginWins = 2

// A Lead is a session's record, in one scope, against the other votes of
// the validations it voted in whose outcome was reported: the reported
// calls on which the majority of the other votes gave the other verdict,
// as it won them (its verdict was right) and lost them. A call whose
// other votes split evenly, or on which it agreed with their majority,
// adds nothing.
type Lead struct {
	// Session is the session.
	Session int64 `json:"session_id"`
	// Won counts the reported calls on which its verdict was right and
	// the majority of the other votes wrong.
	Won float64 `json:"won"`
	// Lost counts the reported calls on which its verdict was wrong and
	// the majority of the other votes right.
	Lost float64 `json:"lost"`
	// Level is, on the record of a leader ([Book.Leader]), the
	// significance its record passed at: the Book's Options.LeadLevel,
	// or MaxLeadLevel when Margin is at least Options.LeadMargin and it
	// has won MarginWins disagreements or more. 0 on any other record.
	Level float64 `json:"level,omitempty"`
	// Margin is, on the record of a leader, its reliability less the
	// highest reliability of the other sessions asked (0 when it was
	// asked alone). 0 on any other record.
	Margin float64 `json:"margin,omitempty"`
}

// PValue is the one-sided sign test of l: the chance that a session no
// better than the majority of the other votes wins at least l.Won of
// its l.Won+l.Lost disagreements with it (each counted whole, rounded).
// 1 when it never disagreed.
func (l Lead) PValue() float64 {
	won, lost := whole(l.Won), whole(l.Lost)
	if won <= 0 {
		return 1
	}
	// P(Bin(n, 1/2) ≥ won) = P(Bin(n, 1/2) ≤ lost), which Posterior
	// computes for n = lost + (won-1) + 1 tosses.
	return consensus.Posterior(lost, won-1)
}

// Beats is the chance, under a uniform prior on the share of its
// disagreements with the majority of the other votes that the session
// wins, that it wins more than half of them: consensus.Posterior of l's
// counts, each rounded to a whole number. 1/2 when it never disagreed.
func (l Lead) Beats() float64 {
	return consensus.Posterior(whole(l.Won), whole(l.Lost))
}

// Rate is the share of such disagreements the session is expected to
// win, the mean of that share's posterior: (Won+1)/(Won+Lost+2).
func (l Lead) Rate() float64 { return (l.Won + 1) / (l.Won + l.Lost + 2) }

// leadKey is the key of session's record against the other votes in
// scope, under a kind no claim type takes.
func leadKey(scope Scope, session int64) Key {
	op := scope.reservedOperation()
	return Key{Session: session, Operation: op, Kind: "lead " + scope.kind()}
}

// leadDelta returns the evidence a reported call adds to the record of
// the session of ballots[i] against the majority of the call's other
// votes: a win when the two disagreed and its vote was right, a loss
// when they disagreed and it was wrong. Only votes for one of a
// validation's two verdicts count (Backed, or Opposed): a dissent from
// an open answer is not known to be right. A check's vote (Ballot.Check)
// counts neither as the session's nor as one of the others; a vote
// already scored on another call (Ballot.Scored) counts only as one of
// the others.
func leadDelta(scope Scope, ballots []Ballot, i int, right bool, sign float64) (Delta, bool) {
	bl := ballots[i]
	if bl.Check || bl.Scored || !bl.Backed && !bl.Opposed {
		return Delta{}, false
	}
	var backed, opposed int
	for j, o := range ballots {
		switch {
		case j == i, o.Check:
		case o.Backed:
			backed++
		case o.Opposed:
			opposed++
		}
	}
	if backed == opposed || (backed > opposed) == bl.Backed {
		return Delta{}, false // no majority of the others, or the session agrees with it
	}
	var d Record
	if bl.Backed == right {
		d.Right = sign
	} else {
		d.Wrong = sign
	}
	return Delta{Key: leadKey(scope, bl.Session), Delta: d}, true
}

// Leader returns, among sessions, the session whose record in scope
// shows it right more often than the majority of the other votes of its
// calls, with significance (its record's PValue at most the Book's
// Options.LeadLevel, DefaultLeadLevel by default, or at most
// MaxLeadLevel when its reliability stands Options.LeadMargin or more
// above every other session's and it has won two disagreements or more;
// the least p-value wins, a tie the more reliable session, then the
// lower id, whatever the order of sessions), and whose reliability in
// scope is the highest of sessions; false when none passes, or when the
// one of least p-value is not the most reliable, even if a less
// significant record of the most reliable session passes (no other
// session is taken in its place: docs/ACCURACY.md, Variants, measures
// that alternative). Such a
// session, run alone, answers better than the others together, and no
// other session's outcomes rank it higher. The Lead returned holds the
// level its record passed at and its margin, so that the rule can be
// checked.
//
// The record is scored against the others' majority rather than the
// call's decision, which the session's own weighted vote moves: a strong
// judge that the decisions follow seldom disagrees with them, and would
// take as many reports to lead as the decisions take to go wrong. The
// level is each session's own, checked after every report: across five
// sessions and a long history, a session no better than the others
// leads by luck more often than the level (1 time in 8 by default),
// which the reliability check bounds (docs/ACCURACY.md measures what
// that costs). A leader's
// record moves on the calls it shares with other sessions (a validation
// of another tier, an explored call), not on those it decides alone,
// even beside a check ([Ballot.Check]). A check teaches the checking
// session's reliability, so a session whose outcomes come to rank it
// above the leader ends the lead; a host that knows a session has
// changed (a new model behind it) forgets it ([Book.Forget],
// [Book.Identify]). A session that is not positive is refused with an
// error wrapping ErrInvalid, as Evidence refuses it.
func (b *Book) Leader(ctx context.Context, scope Scope, sessions []int64) (Lead, bool, error) {
	if err := scope.check(); err != nil {
		return Lead{}, false, err
	}
	if err := CheckSessions(sessions); err != nil {
		return Lead{}, false, err
	}
	if len(sessions) == 0 {
		return Lead{}, false, nil
	}
	recs, err := b.store.Load(ctx, leaderKeys(nil, scope, sessions))
	if err != nil {
		return Lead{}, false, err
	}
	l, ok := b.leaderOf(scope, sessions, recs)
	return l, ok, nil
}

// leaderKeys appends to dst the keys Leader reads: each session's record
// against the others, then its records at each level of scope, which its
// reliability is read from.
func leaderKeys(dst []Key, scope Scope, sessions []int64) []Key {
	for _, s := range sessions {
		dst = append(dst, leadKey(scope, s))
	}
	for _, s := range sessions {
		dst = scope.appendKeys(dst, s)
	}
	return dst
}

// leaderOf returns the leader among sessions (see Leader) from recs, the
// records of leaderKeys. It does not depend on the order of sessions: of
// records equally significant, the more reliable session's counts, then
// the lower id's.
func (b *Book) leaderOf(scope Scope, sessions []int64, recs []Record) (Lead, bool) {
	levels := scope.levels()
	prior, strength := b.opts.Prior.Mean(), b.opts.Prior.Right+b.opts.Prior.Wrong
	var buf [8]float64 // room enough for most calls
	rel := slices.Grow(buf[:0], len(sessions))[:len(sessions)]
	for i := range sessions { // as Evidence reads them
		from := len(sessions) + i*levels
		rel[i], _ = nested(recs[from:from+levels], prior, strength)
	}
	at, bestP, best := -1, 2.0, Lead{}
	for i, s := range sessions {
		l := leadOf(s, recs[i])
		l.Margin = margin(rel, sessions, i)
		l.Level = b.level(l, l.Margin)
		p := l.PValue()
		if p > l.Level {
			continue
		}
		if at < 0 || p < bestP || p == bestP && (rel[i] > rel[at] || rel[i] == rel[at] && s < sessions[at]) {
			at, bestP, best = i, p, l
		}
	}
	if at < 0 || slices.Max(rel) > rel[at] { // none, or another session's outcomes rank it higher
		return Lead{}, false
	}
	return best, true
}

// level is the significance at which record l of a session whose
// reliability stands margin above every other session's leads: the
// Book's LeadLevel, or MaxLeadLevel when margin is at least LeadMargin
// and l has won two disagreements or more.
func (b *Book) level(l Lead, margin float64) float64 {
	if margin >= b.opts.LeadMargin && math.Round(l.Won) >= MarginWins {
		return MaxLeadLevel
	}
	return b.opts.LeadLevel
}

// margin is rel[i] less the highest reliability of rel of another session
// than sessions[i] (a session named twice is not its own other); 0 when
// rel holds no other.
func margin(rel []float64, sessions []int64, i int) float64 {
	m := math.Inf(1)
	for j, r := range rel {
		if sessions[j] != sessions[i] {
			m = min(m, rel[i]-r)
		}
	}
	if math.IsInf(m, 1) {
		return 0
	}
	return m
}

// leadOf reads session's record against the other votes, rec (its
// leadKey's), as a Lead.
func leadOf(session int64, rec Record) Lead {
	return Lead{Session: session, Won: rec.Right, Lost: rec.Wrong}
}

// whole rounds a count to the nearest int, saturating at math.MaxInt
// (so that a count too large for an int is not wrapped by the
// conversion) and reading NaN and negative counts as 0.
func whole(x float64) int {
	switch r := math.Round(x); {
	case !(r > 0):
		return 0
	case r >= math.MaxInt:
		return math.MaxInt
	default:
		return int(r)
	}
}
