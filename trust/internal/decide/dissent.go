package decide

import (
	"slices"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/reputation"
)

// DissentAgainst is how many agreeing votes a session must stand alone
// against for the dissent rule to hear it (Rules.Dissent): every other
// run of a call that ran the five runs adaptive allows
// (consensus.DefaultMaxRuns).
const DissentAgainst = 4

// DissentLevel is the chance, read on its record, that a session wins
// more than half of its disagreements with the majority of the others
// (reputation.Lead.Beats) that the dissent rule asks of it: three wins
// in three disagreements pass (0.94), four in six do not (0.77).
const DissentLevel = 0.8

// Dissent reports whether the dissent rule decides out, the tally of a
// finished adaptive validation with reputation on (Calibrated), and if
// so the index of the vote it answers and that vote's session's record
// among recs (a session's first record there). The rule: one session's verdict stands alone against at
// least DissentAgainst cast votes that agree on the other verdict, and
// its record against the majority of the other votes of its reported
// calls shows it right in more than half of such disagreements with a
// chance of at least DissentLevel. Where weak judges agree, their
// mistakes go together and their votes outweigh a strong one; how such
// disagreements turned out is what tells them apart, and the record
// counts every reported call the session voted in.
//
// A call the rule decides states the record's Rate, the share of such
// disagreements the session is expected to win, recomputable from the
// record the response and the receipt carry; its report teaches no
// calibration map. Other tiers, delegations and a session of no record
// are left as they are: before any reported outcome the rule decides
// nothing.
func (r Rules) Dissent(out consensus.Outcome, recs []reputation.Lead) (int, reputation.Lead, bool) {
	if r.Tier != Adaptive || r.Delegation || !r.Calibrated || len(recs) == 0 {
		return 0, reputation.Lead{}, false
	}
	var n [2]int  // the VALID and INVALID votes
	var at [2]int // the index of the last of each
	for i, v := range out.Votes {
		k := 0
		switch v.Label {
		case consensus.LabelValid:
		case consensus.LabelInvalid:
			k = 1
		default:
			continue
		}
		n[k]++
		at[k] = i
	}
	lone := slices.Index(n[:], 1)
	if lone < 0 || n[1-lone] < DissentAgainst {
		return 0, reputation.Lead{}, false
	}
	i := at[lone]
	rec := slices.IndexFunc(recs, func(l reputation.Lead) bool { return l.Session == out.Votes[i].Session })
	if rec < 0 || recs[rec].Beats() < DissentLevel {
		return 0, reputation.Lead{}, false
	}
	return i, recs[rec], true
}

// dissented returns out answering its vote i alone, against the cast
// votes for the other verdict.
func dissented(out consensus.Outcome, i int) consensus.Outcome {
	v := out.Votes[i]
	out.Winner, out.Label, out.Answer = i, v.Label, v.Answer
	out.Agreeing, out.Against = 1, 0
	for _, o := range out.Votes {
		if (o.Label == consensus.LabelValid || o.Label == consensus.LabelInvalid) && o.Label != v.Label {
			out.Against++
		}
	}
	out.Agreement = 1 / float64(1+out.Against)
	out.LowConfidence, out.Disagreement = true, true
	if out.Weights != nil && i < len(out.Weights) {
		out.Score = out.Weights[i]
	}
	return out
}
