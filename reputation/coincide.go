package reputation

import (
	"context"
	"slices"

	"github.com/vouchkit/vouch/consensus"
)

// DefaultCoincidencePrior returns what a scope's coincidence rate starts
// from (see [Book.Coincidence]): consensus.DefaultCoincidence worth ten
// chances of a wrong answer to coincide.
func DefaultCoincidencePrior() Prior { return Prior{Right: 1, Wrong: 9} }

// coincidenceKey is the key of the panel's coincidence record in scope,
// under a kind no claim type takes.
func coincidenceKey(scope Scope) Key {
	op := scope.reservedOperation()
	return Key{Session: PanelSession, Operation: op, Kind: "coincidence " + scope.kind()}
}

// coincidenceDelta appends to dst what a call's cast votes on an open
// question (each with an answer) teach of how often wrong answers
// coincide, read at coincide, the scope's figure before the call, and
// at the mean reliability of the votes' sessions in rel. Which answers were wrong is
// not known, so the call adds what it is expected to show under
// consensus.PluralityPosteriorAt, the model the figure serves (one step
// of expectation–maximisation): each hypothesis (group i is right, or
// none is) weighs its posterior, and under it the w wrong answers, in g
// groups, took w − g coincidences in w − 1 chances: Right grows by
// w − g and Wrong by g − 1. So a pair beside a single answer teaches
// little where wrong answers seldom coincide, and much where they often
// do. member holds each vote's group. A call whose answers all agree
// teaches nothing: it cannot tell right answers from wrong ones that
// coincide but by the reliability, and counted, a panel that always
// agrees would read its wrong answers as ever more alike (the chance of
// agreeing grows with theirs). Nor does a validation, whose answers are
// verdicts.
func coincidenceDelta(dst []Delta, scope Scope, cast []consensus.Vote, member []int, rel consensus.Reliabilities, coincide float64) []Delta {
	if len(cast) < 2 || slices.ContainsFunc(cast, func(v consensus.Vote) bool { return v.Answer == nil }) {
		return dst
	}
	var buf [8]int
	groups := buf[:0]
	n := 0
	for _, g := range member {
		if g < 0 { // no answer a group holds
			continue
		}
		n++
		for len(groups) <= g {
			groups = append(groups, 0)
		}
		groups[g]++
	}
	groups = slices.DeleteFunc(groups, func(k int) bool { return k == 0 })
	if len(groups) < 2 {
		return dst
	}
	reliability := 0.0
	for _, v := range cast {
		reliability += rel.Of(v.Session)
	}
	reliability /= float64(len(cast))
	// none: the hypothesis that no group is right, with every answer wrong.
	none, same, chances := 1.0, 0.0, 0.0
	tally := func(p float64, wrong, groups int) {
		if wrong >= 2 {
			same += p * float64(wrong-groups)
			chances += p * float64(wrong-1)
		}
	}
	var postBuf [8]float64
	posts := consensus.PluralityPosteriorsAt(postBuf[:0], groups, coincide, reliability)
	for i, k := range groups {
		none -= posts[i]
		tally(posts[i], n-k, len(groups)-1)
	}
	tally(max(none, 0), n, len(groups))
	if chances == 0 {
		return dst
	}
	return append(dst, Delta{Key: coincidenceKey(scope), Delta: Record{Right: same, Wrong: chances - same}})
}

// openQuestion reports whether votes, those cast, are at least two
// answers to an open question: none without an answer.
func openQuestion(votes []consensus.Vote) bool {
	n := 0
	for _, v := range votes {
		if notCast(v) {
			continue
		}
		if v.Answer == nil {
			return false
		}
		n++
	}
	return n >= 2
}

// Coincidence returns the chance, learned in scope from the calls it
// learned (Learn), that a wrong answer to an open question coincides
// with another: the coincide of consensus.PluralityPosteriorAt, read as
// the mean of a Beta distribution over DefaultCoincidencePrior. No call
// says which of its answers were wrong; each adds what its answers show
// under that model's posterior at the figure before it (see the package
// doc), so that the figure is the model's estimate from the answers
// alone, and four equal answers beside one other count too, though they
// win. A call whose answers all agree teaches nothing.
//
// Where the model holds (each question's runs right at one chance drawn
// around the reliability), the estimate runs somewhat above the rate:
// on simulated panels right 80% of the time it reads 0.09 where wrong
// answers coincide 5% of the time and 0.32 where they do 30%. Counting
// only the answers outside each call's largest group would read about
// 0.12 for the second: the wrong answers that agree most often win, or
// tie, and would never be counted.
func (b *Book) Coincidence(ctx context.Context, scope Scope) (float64, error) {
	if err := scope.check(); err != nil {
		return 0, err
	}
	recs, err := b.store.Load(ctx, []Key{coincidenceKey(scope)})
	if err != nil {
		return 0, err
	}
	return coincidenceOf(recs[0]), nil
}

// coincidenceOf reads Coincidence from r, the record of coincidenceKey.
func coincidenceOf(r Record) float64 {
	p := DefaultCoincidencePrior()
	return (r.Right + p.Right) / (r.Right + r.Wrong + p.Right + p.Wrong)
}
