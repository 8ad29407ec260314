package consensus

import "math"

// DefaultCoincidence is the chance that two wrong answers to an open
// question coincide that PluralityPosterior is given before anything is
// learned of a panel: one in ten.
const DefaultCoincidence = 0.1

// PluralityPosterior returns the probability that the answer of group
// winner is right, given the size of every group of equal answers to an
// open question (a number, a grouped text) and coincide, the chance that
// two wrong answers coincide. Where wrong answers scatter (coincide
// small), a plurality is strong evidence though it holds no majority;
// Posterior, which counts every other answer as one rival, cannot see it.
//
// Each run is right with a probability p, uniform on [0, 1] before the
// votes; a wrong run's answer matches another given wrong answer with
// probability coincide, so that a group of k wrong answers took k−1
// coincidences; the right answer is the answer of one of the groups, or
// of none. With n answers in all, group i of size k_i is right with
// weight
//
//	B(k_i+1, n−k_i+1) · coincide^(Σ_{h≠i} (k_h−1))
//
// and no group with weight B(1, n+1) · coincide^(Σ_h (k_h−1)), B the
// Beta function; PluralityPosterior is winner's weight over their sum.
// So two answers that agree give 1/(1+coincide) (0.91 at 0.1), one
// answer alone 1/2, a pair among three single answers
// 1/(1+16·coincide) (0.38 at 0.1, 0.56 at 0.05), and two pairs 1/2
// less what the single answers and "none" take. It returns 0 for a
// winner out of range or a group of no answer; coincide is clamped to
// [0, 1].
func PluralityPosterior(groups []int, winner int, coincide float64) float64 {
	return pluralityPosterior(groups, winner, coincide, 1, 1)
}

// PluralityStrength is what the prior of [PluralityPosteriorAt] is worth:
// five runs, as reputation's DefaultPrior, Beta(4, 1).
const PluralityStrength = 5

// PluralityPosteriorAt is [PluralityPosterior] for a panel whose runs
// are right at the rate reliability, r: before the votes, each run's
// chance p of being right on the question follows Beta(s·r, s·(1−r)),
// s = PluralityStrength, instead of the uniform. Group i of size k_i
// then weighs
//
//	B(k_i+s·r, n−k_i+s·(1−r)) · coincide^(Σ_{h≠i} (k_h−1))
//
// and no group B(s·r, n+s·(1−r)) · coincide^(Σ_h (k_h−1)). The uniform
// prior treats a question as likely to stump a run as not; a panel
// right on most questions makes a pair among scattered answers far
// likelier right than two coinciding mistakes. At r = 0.8 (the prior of
// Beta(4, 1)) and coincide 0.1, one answer alone states 0.8, two
// answers that agree 0.99, a pair beside one other answer 0.935 and a
// pair among three single answers 0.746. r is clamped to
// [1−MaxReliability, MaxReliability] (NaN reads DefaultReliability); the
// rest is as PluralityPosterior.
func PluralityPosteriorAt(groups []int, winner int, coincide, reliability float64) float64 {
	r := min(max(reliability, 1-MaxReliability), MaxReliability)
	if math.IsNaN(reliability) {
		r = DefaultReliability
	}
	return pluralityPosterior(groups, winner, coincide, PluralityStrength*r, PluralityStrength*(1-r))
}

// pluralityPosterior is PluralityPosterior under the prior Beta(a, b)
// of a run's chance of being right.
func pluralityPosterior(groups []int, winner int, coincide, a, b float64) float64 {
	if winner < 0 || winner >= len(groups) {
		return 0
	}
	n := 0
	for _, k := range groups {
		if k <= 0 {
			return 0
		}
		n += k
	}
	c := min(max(coincide, 0), 1)
	logB := func(a, b float64) float64 {
		la, _ := math.Lgamma(a)
		lb, _ := math.Lgamma(b)
		lab, _ := math.Lgamma(a + b)
		return la + lb - lab
	}
	spare := 0 // Σ_h (k_h − 1): the coincidences if every group is wrong
	for _, k := range groups {
		spare += k - 1
	}
	// weight returns the log weight of hypothesis right (-1: none).
	weight := func(right int) float64 {
		k, m := 0, spare
		if right >= 0 {
			k, m = groups[right], spare-(groups[right]-1)
		}
		w := logB(float64(k)+a, float64(n-k)+b)
		if m > 0 {
			if c == 0 {
				return math.Inf(-1)
			}
			w += float64(m) * math.Log(c)
		}
		return w
	}
	top := weight(winner)
	if math.IsInf(top, -1) {
		return 0
	}
	sum := 1.0 // the winner's own, relative to itself
	for i := range groups {
		if i != winner {
			sum += math.Exp(weight(i) - top)
		}
	}
	sum += math.Exp(weight(-1) - top)
	return 1 / sum
}
