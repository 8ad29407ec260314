package consensus

import (
	"fmt"
	"slices"
)

// Majority is the Aggregator of StrategyMajority: the largest group of
// agreeing votes wins. The package doc lists its rules.
type Majority struct{}

// Aggregate implements Aggregator.
func (Majority) Aggregate(votes []Vote, p Policy) (Outcome, error) {
	var buf [8]group // spares the heap for up to 8 groups
	t, err := count(buf[:0], votes, p, false, nil)
	if err != nil {
		return Outcome{}, err
	}
	b := t.leader()
	if b >= 0 && p.Failures == FailuresNegative && t.failed >= t.groups[b].size {
		b = -1 // the failures win
	}
	out := outcomeOf(StrategyMajority, votes, t, p, b)
	if b >= 0 {
		out.Confidence = Posterior(out.Agreeing, out.Against)
	}
	return finish(out, p, t)
}

// outcomeOf returns the outcome of votes, counted into t, whose winning
// group is t.groups[b] (none when b < 0): every figure but the
// confidence.
func outcomeOf(s Strategy, votes []Vote, t tally, p Policy, b int) Outcome {
	n := len(votes)
	out := Outcome{
		Strategy:  s,
		Winner:    -1,
		Replicas:  n,
		Answered:  t.cast,
		Failed:    t.failed,
		Cancelled: t.cancelled,
		Verdicts:  make([]Label, n),
		Votes:     slices.Clone(votes),
	}
	for i, v := range votes {
		out.Verdicts[i] = v.Label
	}
	negative := p.Failures == FailuresNegative
	if b < 0 {
		out.Label = noWinnerLabel(votes)
		out.Disagreement = t.cast > 0
		out.LowConfidence = true
		return out
	}
	g := t.groups[b]
	reported := n - t.cancelled
	out.Label = g.label
	out.Answer = votes[g.first].Answer
	out.Winner = g.first
	out.Agreeing = g.size
	out.Against = t.cast - g.size
	if negative {
		out.Against += t.failed
	}
	out.Agreement = float64(g.size) / float64(g.size+out.Against)
	out.Disagreement = t.cast > g.size || (negative && t.failed > 0)
	out.LowConfidence = out.Disagreement || 2*g.size <= reported
	return out
}

// finish returns out with the error of its policy: under FailHard, an
// *OutcomeError when no vote was cast or the votes disagree.
func finish(out Outcome, p Policy, t tally) (Outcome, error) {
	switch {
	case p.Disagreement != FailHard:
	case t.cast == 0:
		return out, &OutcomeError{Outcome: out, Err: ErrAllFailed}
	case out.Disagreement:
		return out, &OutcomeError{Outcome: out, Err: ErrDisagreement}
	}
	return out, nil
}

// Decided implements Aggregator. It is conservative: it waits whenever the
// votes to come could tie with the leading group, without asking whether
// the tie rule would keep the leader.
func (Majority) Decided(votes []Vote, p Policy) bool {
	var buf [8]group
	t, err := count(buf[:0], votes, p, true, nil)
	if err != nil || t.pending == 0 {
		return true
	}
	if p.Disagreement == FailHard {
		return t.disagrees()
	}
	negative := p.Failures == FailuresNegative
	b, lead := t.leader(), 0
	if b >= 0 {
		lead = t.groups[b].size
	}
	if negative && t.failed >= lead+t.pending {
		return true // the failures win, or tie and win, whatever comes
	}
	if lead == 0 || t.pending >= lead {
		return false // the votes to come may form a group as large
	}
	for i, g := range t.groups {
		if i != b && g.size+t.pending >= lead {
			return false
		}
	}
	return !negative || t.failed+t.pending < lead
}

// A group is a set of cast votes that agree.
type group struct {
	label Label
	first int // index of the group's first vote
	size  int
}

// beats reports whether g ranks before h: larger first, then the more
// cautious label, then the earlier first vote.
func (g group) beats(h group) bool {
	if g.size != h.size {
		return g.size > h.size
	}
	if cg, ch := caution(g.label), caution(h.label); cg != ch {
		return cg < ch
	}
	return g.first < h.first
}

// caution ranks labels for breaking ties: negative verdicts first, positive
// verdicts last, every other label between.
func caution(l Label) int {
	switch l {
	case LabelInvalid, LabelFalse:
		return 0
	case LabelValid, LabelTrue:
		return 2
	}
	return 1
}

// A tally is the votes counted.
type tally struct {
	groups    []group // in order of first vote
	cast      int     // cast votes
	failed    int     // TIMEOUT and ERROR
	cancelled int     // CANCELLED
	pending   int     // empty labels
}

// count groups the cast votes by label and answer key, appending the groups
// to groups[:0]. It accepts empty labels (pending votes) only when pending
// is true. When member is not nil (of len(votes)), it records there each
// vote's group index, -1 for a vote not cast.
func count(groups []group, votes []Vote, p Policy, pending bool, member []int) (tally, error) {
	t := tally{groups: groups[:0]}
	if err := p.check(); err != nil {
		return t, err
	}
	if len(votes) == 0 {
		return t, fmt.Errorf("%w: no votes", ErrInvalid)
	}
	key := p.key()
	type groupKey struct {
		label Label
		key   string
	}
	index := make(map[groupKey]int, 8) // small enough to stay off the heap
	for i, v := range votes {
		if member != nil {
			member[i] = -1
		}
		switch {
		case v.Label == "":
			if !pending {
				return t, fmt.Errorf("%w: replica %d: empty label", ErrInvalid, i)
			}
			t.pending++
		case v.Label == LabelCancelled:
			t.cancelled++
		case v.Label.Failed():
			t.failed++
		default:
			k, err := key(v.Answer)
			if err != nil {
				return t, fmt.Errorf("%w: replica %d: answer key: %w", ErrInvalid, i, err)
			}
			t.cast++
			gk := groupKey{v.Label, k}
			gi, ok := index[gk]
			if !ok {
				gi = len(t.groups)
				index[gk] = gi
				t.groups = append(t.groups, group{label: v.Label, first: i})
			}
			t.groups[gi].size++
			if member != nil {
				member[i] = gi
			}
		}
	}
	return t, nil
}

// disagrees reports whether the answers counted hold two groups: a
// disagreement whoever wins, which decides a FailHard call; without them,
// any vote to come may still disagree. A failure, even counted as
// negative evidence (FailuresNegative), decides nothing early: the call
// fails all the same once every replica reports, and the answers still to
// come are evidence a caller weighing failures otherwise (as no votes)
// reads, not replicas to cancel.
func (t *tally) disagrees() bool {
	return len(t.groups) >= 2
}

// leader returns the index of the leading group, -1 if there is none.
func (t *tally) leader() int {
	best := -1
	for i, g := range t.groups {
		if best < 0 || g.beats(t.groups[best]) {
			best = i
		}
	}
	return best
}

// noWinnerLabel returns the commonest failure label of votes (the earlier
// one on a tie), or CANCELLED when no vote failed.
func noWinnerLabel(votes []Vote) Label {
	var timeouts, errs int
	first := Label("")
	for _, v := range votes {
		switch v.Label {
		case LabelTimeout:
			timeouts++
		case LabelError:
			errs++
		default:
			continue
		}
		if first == "" {
			first = v.Label
		}
	}
	switch {
	case timeouts == 0 && errs == 0:
		return LabelCancelled
	case timeouts > errs:
		return LabelTimeout
	case errs > timeouts:
		return LabelError
	}
	return first
}
