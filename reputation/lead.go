package reputation

import (
	"context"
	"math"

	"github.com/vouchkit/vouch/consensus"
)

// DefaultLeadLevel is the significance at which a session's record
// against the decisions makes it the leader (see [Book.Leader]): the
// chance, were the session no better than the decisions, that it would
// have won its disagreements with them as often as it did. 1/16 is the
// chance of four wins in four disagreements: the shortest record that
// leads.
const DefaultLeadLevel = 1.0 / 16

// A Lead is a session's record against the decisions of the calls it
// voted in whose outcome was reported, in one scope: the reported calls
// on which it and the decision disagreed, as it won them (it was right,
// the decision wrong) and lost them.
type Lead struct {
	// Session is the session.
	Session int64 `json:"session_id"`
	// Won counts the reported calls on which its vote was right and the
	// call's decision wrong.
	Won float64 `json:"won"`
	// Lost counts the reported calls on which its vote was wrong and the
	// call's decision right.
	Lost float64 `json:"lost"`
}

// PValue is the one-sided sign test of l: the chance that a session no
// better than the decisions wins at least l.Won of its l.Won+l.Lost
// disagreements with them (each counted whole, rounded). 1 when it never
// disagreed.
func (l Lead) PValue() float64 {
	won, lost := int(math.Round(l.Won)), int(math.Round(l.Lost))
	if won <= 0 {
		return 1
	}
	// P(Bin(n, 1/2) ≥ won) = P(Bin(n, 1/2) ≤ lost), which Posterior
	// computes for n = lost + (won-1) + 1 tosses.
	return consensus.Posterior(lost, won-1)
}

// leadKey is the key of session's record against the decisions in
// scope, under a kind no claim type takes.
func leadKey(scope Scope, session int64) Key {
	op := scope.reservedOperation()
	return Key{Session: session, Operation: op, Kind: "lead " + scope.Kind}
}

// leadDelta returns the evidence a reported call adds to the record of
// the session of bl against the decision: a dissent from a right outcome
// lost; a dissent from a wrong one won when bl.Opposed (its vote was the
// one other answer); nothing otherwise, since a backer agreed with the
// decision and any other dissent is not known to be right.
func leadDelta(scope Scope, bl Ballot, right bool, sign float64) (Delta, bool) {
	var d Record
	switch {
	case bl.Backed:
		return Delta{}, false
	case right:
		d.Wrong = sign
	case bl.Opposed:
		d.Right = sign
	default:
		return Delta{}, false
	}
	return Delta{Key: leadKey(scope, bl.Session), Delta: d}, true
}

// Leader returns, among sessions, the session whose record in scope
// shows it right more often than the decisions of the calls it voted in,
// with significance: its record's PValue at most DefaultLeadLevel (the
// least p-value wins; ties go to the first); false when none qualifies.
// Such a session, run alone, answers better than the rule that decided
// those calls did.
//
// The level is each session's own, checked after every report: across
// five sessions and a long history, a session no better than the
// decisions leads by luck more often than 1 time in 16 (docs/ACCURACY.md
// measures what that costs on panels where no session leads). Its record
// stops moving once it decides alone, since it then agrees with every
// decision: a host that suspects a leader has changed clears its
// records.
func (b *Book) Leader(ctx context.Context, scope Scope, sessions []int64) (Lead, bool, error) {
	if len(sessions) == 0 {
		return Lead{}, false, nil
	}
	keys := make([]Key, len(sessions))
	for i, s := range sessions {
		keys[i] = leadKey(scope, s)
	}
	recs, err := b.store.Load(ctx, keys)
	if err != nil {
		return Lead{}, false, err
	}
	best, bestP := Lead{}, 2.0
	for i, s := range sessions {
		l := Lead{Session: s, Won: recs[i].Right, Lost: recs[i].Wrong}
		if p := l.PValue(); p <= DefaultLeadLevel && p < bestP {
			best, bestP = l, p
		}
	}
	return best, bestP <= 1, nil
}
