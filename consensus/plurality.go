package consensus

import (
	"math"
	"slices"
)

// DefaultCoincidence is the chance that two wrong answers to an open
// question coincide that PluralityPosterior is given before anything is
// learned of a panel: one in ten.
const DefaultCoincidence = 0.1

// CoincidenceStrength is what coincide is worth as a prior over
// questions in [PluralityPosterior]: four wrong answers. Questions
// differ in how their wrong answers gather (a trap draws the same wrong
// number from several runs, a long sum scatters them), and a call's own
// answers say which kind it is.
const CoincidenceStrength = 4

// PluralityPosterior returns the probability that the answer of group
// winner is right, given the size of every group of equal answers to an
// open question (a number, a grouped text) and coincide, the chance that
// a wrong answer coincides with another. Where wrong answers scatter
// (coincide small), a plurality is strong evidence though it holds no
// majority; Posterior, which counts every other answer as one rival,
// cannot see it.
//
// Each run is right with a probability p, uniform on [0, 1] before the
// votes. Each wrong answer after the first on a question coincides with
// one before it with the question's chance q, and is new otherwise;
// before the votes q follows Beta(t·coincide, t·(1−coincide)),
// t = CoincidenceStrength. The right answer is the answer of one of the
// groups, or of none. A hypothesis that calls w answers wrong, in g
// groups, has them take w − g coincidences and g − 1 new answers, of
// probability
//
//	E(w, g) = B(t·c + w − g, t·(1−c) + g − 1) / B(t·c, t·(1−c))
//
// (1 when w = 0), c = coincide, B the Beta function. With n answers in
// all, group i of size k_i is right with weight
//
//	B(k_i+1, n−k_i+1) · E(n−k_i, groups−1)
//
// and no group with weight B(1, n+1) · E(n, groups); PluralityPosterior
// is winner's weight over their sum. So two answers that agree give
// 1/(1+coincide) (0.91 at 0.1) and one answer alone 1/2; a pair among
// three single answers 0.52 at 0.1, and two pairs 1/2 less what the
// single answer and "none" take (0.25 at 0.1). Scattered answers make a question
// whose wrong answers scatter likelier, and so a pair among them surer
// than it would be at the same q on every question. It returns 0 for a
// winner out of range, a group of no answer or sizes whose sum exceeds
// math.MaxInt; coincide is clamped to
// [0, 1], where q is coincide on every question (NaN reads
// DefaultCoincidence).
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
//	B(k_i+s·r, n−k_i+s·(1−r)) · E(n−k_i, groups−1)
//
// and no group B(s·r, n+s·(1−r)) · E(n, groups). The uniform prior
// treats a question as likely to stump a run as not; a panel right on
// most questions makes a pair among scattered answers far likelier right
// than two coinciding mistakes. At r = 0.8 (the prior of Beta(4, 1)) and
// coincide 0.1, one answer alone states 0.8, two answers that agree
// 0.99, a pair beside one other answer 0.94, a pair among three single
// answers 0.82 and two pairs beside a single answer 0.43. r is clamped to [1−MaxReliability,
// MaxReliability] (NaN reads DefaultReliability); the rest is as
// PluralityPosterior.
func PluralityPosteriorAt(groups []int, winner int, coincide, reliability float64) float64 {
	r := min(max(reliability, 1-MaxReliability), MaxReliability)
	if math.IsNaN(reliability) {
		r = DefaultReliability
	}
	return pluralityPosterior(groups, winner, coincide, PluralityStrength*r, PluralityStrength*(1-r))
}

// PluralityPosteriorsAt appends to dst the PluralityPosteriorAt of each
// group of groups, in order, weighing each hypothesis once; the chance
// that no group is right is one less their sum. It serves a caller that
// weighs every hypothesis, as reputation's learning of the coincidence
// does.
func PluralityPosteriorsAt(dst []float64, groups []int, coincide, reliability float64) []float64 {
	r := min(max(reliability, 1-MaxReliability), MaxReliability)
	if math.IsNaN(reliability) {
		r = DefaultReliability
	}
	return pluralityPosteriors(dst, groups, coincide, PluralityStrength*r, PluralityStrength*(1-r))
}

// logB returns the logarithm of the Beta function at a and b.
func logB(a, b float64) float64 {
	la, _ := math.Lgamma(a)
	lb, _ := math.Lgamma(b)
	lab, _ := math.Lgamma(a + b)
	return la + lb - lab
}

// pluralityPosterior is PluralityPosterior under the prior Beta(a, b)
// of a run's chance of being right.
func pluralityPosterior(groups []int, winner int, coincide, a, b float64) float64 {
	if winner < 0 || winner >= len(groups) {
		return 0
	}
	var buf [9]float64
	w := logWeights(buf[:0], groups, coincide, a, b)
	if w == nil {
		return 0
	}
	return posteriorOf(w, winner)
}

// pluralityPosteriors appends to dst the pluralityPosterior of each group
// in turn, each hypothesis weighed once.
func pluralityPosteriors(dst []float64, groups []int, coincide, a, b float64) []float64 {
	var buf [9]float64
	w := logWeights(buf[:0], groups, coincide, a, b)
	for i := range groups {
		p := 0.0
		if w != nil {
			p = posteriorOf(w, i)
		}
		dst = append(dst, p)
	}
	return dst
}

// posteriorOf returns the posterior of hypothesis i of the log weights w
// (logWeights): its weight over their sum.
func posteriorOf(w []float64, i int) float64 {
	top := w[i]
	if math.IsInf(top, -1) {
		return 0
	}
	sum := 1.0 // its own, relative to itself
	for j, x := range w {
		if j != i {
			sum += math.Exp(x - top)
		}
	}
	return 1 / sum
}

// logWeights appends to dst the log weight of the hypothesis that each
// group of groups is right, in order, then of the hypothesis that none
// is (see PluralityPosterior), under the prior Beta(a, b) of a run's
// chance of being right: nil when a group holds no answer or the sizes sum
// beyond math.MaxInt. Groups of one size weigh alike, and each size is
// weighed once.
func logWeights(dst []float64, groups []int, coincide, a, b float64) []float64 {
	n := 0
	for _, k := range groups {
		if k <= 0 || k > math.MaxInt-n {
			return nil
		}
		n += k
	}
	c := min(max(coincide, 0), 1)
	if math.IsNaN(coincide) {
		c = DefaultCoincidence
	}
	t := float64(CoincidenceStrength)
	prior := logB(t*c, t*(1-c)) // E's denominator
	// wrong returns the log of E(w, g): w wrong answers in g groups.
	wrong := func(w, g int) float64 {
		same, fresh := w-g, g-1
		switch {
		case w == 0 || same == 0 && fresh == 0:
			return 0
		case c == 0 && same > 0, c == 1 && fresh > 0:
			return math.Inf(-1)
		case c == 0 || c == 1:
			return 0
		}
		return logB(t*c+float64(same), t*(1-c)+float64(fresh)) - prior
	}
	first := len(dst)
	for i, k := range groups {
		if j := slices.Index(groups[:i], k); j >= 0 {
			dst = append(dst, dst[first+j]) // the weight of the first group of that size
			continue
		}
		dst = append(dst, logB(float64(k)+a, float64(n-k)+b)+wrong(n-k, len(groups)-1))
	}
	return append(dst, logB(a, float64(n)+b)+wrong(n, len(groups)))
}
