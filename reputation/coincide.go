package reputation

import (
	"context"
	"slices"

	"github.com/vouchkit/vouch/consensus"
)

// DefaultCoincidencePrior is what a scope's coincidence rate starts
// from (see [Book.Coincidence]): consensus.DefaultCoincidence worth ten
// pairs of losing answers.
var DefaultCoincidencePrior = Prior{Right: 1, Wrong: 9}

// coincidenceKey is the key of the panel's coincidence record in scope,
// under a kind no claim type takes.
func coincidenceKey(scope Scope) Key {
	op := scope.reservedOperation()
	return Key{Session: PanelSession, Operation: op, Kind: "coincidence " + scope.Kind}
}

// coincidenceDelta appends to dst what a call's cast votes on an open
// question (each with an answer) teach of how often wrong answers
// coincide: the pairs of answers outside the largest group, Right for
// each pair that gave the same answer and Wrong for each that did not.
// member holds each vote's group. A call whose largest group is tied, or
// with fewer than two answers outside it, teaches nothing; so does a
// validation, whose losing answers are all one verdict.
func coincidenceDelta(dst []Delta, scope Scope, cast []consensus.Vote, member []int) []Delta {
	if len(cast) < 3 || slices.ContainsFunc(cast, func(v consensus.Vote) bool { return v.Answer == nil }) {
		return dst
	}
	var buf [8]int
	sizes := buf[:0]
	n := 0
	for _, g := range member {
		if g < 0 { // no answer a group holds
			continue
		}
		n++
		for len(sizes) <= g {
			sizes = append(sizes, 0)
		}
		sizes[g]++
	}
	if n < 3 {
		return dst
	}
	top, tops := slices.Max(sizes), 0
	for _, k := range sizes {
		if k == top {
			tops++
		}
	}
	lost := n - top
	if tops > 1 || lost < 2 {
		return dst
	}
	pairs, same := float64(lost*(lost-1)/2), 0.0
	for _, k := range sizes {
		if k != top {
			same += float64(k * (k - 1) / 2)
		}
	}
	return append(dst, Delta{Key: coincidenceKey(scope), Delta: Record{Right: same, Wrong: pairs - same}})
}

// Coincidence returns the chance, learned in scope from the calls it
// learned (Learn), that two wrong answers to an open question coincide:
// of the pairs of answers outside each call's largest group, the share
// that gave the same answer, read as the mean of a Beta distribution
// over DefaultCoincidencePrior. It is the coincide of
// consensus.PluralityPosteriorAt. Answers outside the largest group are
// wrong unless the group is; on a panel right most of the time, the
// share measures how wrong answers scatter.
func (b *Book) Coincidence(ctx context.Context, scope Scope) (float64, error) {
	recs, err := b.store.Load(ctx, []Key{coincidenceKey(scope)})
	if err != nil {
		return 0, err
	}
	return coincidenceOf(recs[0]), nil
}

// coincidenceOf reads Coincidence from r, the record of coincidenceKey.
func coincidenceOf(r Record) float64 {
	p := DefaultCoincidencePrior
	return (r.Right + p.Right) / (r.Right + r.Wrong + p.Right + p.Wrong)
}
