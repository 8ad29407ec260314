package consensus

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// A Grouping is a partition of one job's answers by meaning rather than by
// bytes: answers in the same group agree. Its Key is a Policy.Key under
// which the aggregators count the grouped answers as they were grouped.
// Build it with [GroupBySimilarity]; a Grouping is read-only afterwards
// and safe for concurrent use.
//
// Its JSON form is what a response's evidence records, enough to check
// the grouping by hand: the threshold, the group of each answer, and the
// similarity of every pair of answers.
type Grouping struct {
	// Method names how the similarities were measured, such as
	// "cosine of text-embedding-3-small embeddings".
	Method string `json:"method"`
	// Threshold is the similarity at which two answers agree.
	Threshold float64 `json:"threshold"`
	// Groups holds each answer's group, in answer order, numbered from 0
	// in the order the groups were started; -1 for a missing answer.
	Groups []int `json:"groups"`
	// Pairs holds the similarity of every pair of present answers whose
	// keys differ, in order of (A, B). Answers with equal keys
	// (DefaultKey) are the same answer and always share a group.
	Pairs []Similarity `json:"pairs"`

	keys map[string]int // an answer's DefaultKey → its group
}

// Similarity is the measured similarity of two answers.
type Similarity struct {
	// A and B are the answers' indices, A < B.
	A int `json:"a"`
	B int `json:"b"`
	// Value is their similarity: 1 for answers that say the same. It is
	// finite, so that JSON carries it: GroupBySimilarity records a
	// similarity of +Inf as 1, −Inf as −1 and NaN as 0.
	Value float64 `json:"similarity"`
}

// GroupBySimilarity groups answers (nil for a missing one) whose pairwise
// similarity reaches threshold, as given by sim(i, j) for i < j, which is
// called once for each pair of present answers with different keys. Two
// answers with the same DefaultKey are one answer.
//
// The grouping is sequential complete linkage: answers are taken in
// index order, and each joins the first group (in the order groups were
// started) with every member of which its similarity is at least
// threshold; an answer that matches no group in full starts one. So
//
//   - any two answers counted together are at least threshold apart in
//     similarity, which Pairs lets anyone check; no chain of near
//     neighbours can join two answers that differ (single linkage can:
//     a~b and b~c put a with c however far apart they are);
//   - a later answer never moves an earlier one, so the grouping of the
//     first n answers is part of the grouping of n+1: a tally that grows
//     run by run (the trust service's adaptive tier) never recounts.
//
// The price of both is a false disagreement now and then (an answer that
// would fit a later group better stays where it first fit), the error a
// trust decision can afford. threshold must lie in (0, 1]; a similarity
// that is NaN counts as no match. Pairs records +Inf as 1, −Inf as −1 and
// NaN as 0, which JSON can carry and which match or not as they did. It
// returns an error wrapping ErrInvalid for a bad threshold or an answer
// DefaultKey cannot encode.
func GroupBySimilarity(answers []any, threshold float64, sim func(i, j int) float64) (*Grouping, error) {
	if !(threshold > 0 && threshold <= 1) {
		return nil, fmt.Errorf("%w: similarity threshold must be in (0, 1], got %v", ErrInvalid, threshold)
	}
	g := &Grouping{Threshold: threshold, Groups: make([]int, len(answers)), Pairs: []Similarity{}, keys: map[string]int{}}
	first := map[string]int{} // a key → the first answer that had it
	var members [][]int       // each group's distinct answers
	for i, a := range answers {
		if a == nil {
			g.Groups[i] = -1
			continue
		}
		k, err := DefaultKey(a)
		if err != nil {
			return nil, fmt.Errorf("%w: answer %d: %v", ErrInvalid, i, err)
		}
		if j, ok := first[k]; ok {
			g.Groups[i] = g.Groups[j]
			continue
		}
		first[k] = i
		match := make(map[int]bool, len(members)) // answer → reaches threshold
		for _, ms := range members {
			for _, j := range ms {
				v := sim(j, i)
				match[j] = v >= threshold && !math.IsNaN(v)
				switch {
				case math.IsNaN(v):
					v = 0
				case math.IsInf(v, 0):
					v = math.Copysign(1, v)
				}
				g.Pairs = append(g.Pairs, Similarity{A: j, B: i, Value: v})
			}
		}
		g.Groups[i] = len(members)
		for n, ms := range members {
			if all(ms, match) {
				g.Groups[i] = n
				break
			}
		}
		if g.Groups[i] == len(members) {
			members = append(members, nil)
		}
		members[g.Groups[i]] = append(members[g.Groups[i]], i)
		g.keys[k] = g.Groups[i]
	}
	slices.SortFunc(g.Pairs, func(a, b Similarity) int { return cmp.Or(cmp.Compare(a.A, b.A), cmp.Compare(a.B, b.B)) })
	return g, nil
}

func all(ms []int, match map[int]bool) bool {
	for _, j := range ms {
		if !match[j] {
			return false
		}
	}
	return true
}

// Key is a Policy.Key that gives every answer of a group the same key:
// "group <n>". It fails, wrapping ErrInvalid, for an answer that was not
// grouped, and so for every answer of a Grouping decoded from JSON, which
// records the grouping but not the answers.
func (g *Grouping) Key(answer any) (string, error) {
	k, err := DefaultKey(answer)
	if err != nil {
		return "", err
	}
	n, ok := g.keys[k]
	if !ok {
		return "", fmt.Errorf("%w: answer %.40q was not grouped", ErrInvalid, k)
	}
	return fmt.Sprintf("group %d", n), nil
}
