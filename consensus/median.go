package consensus

import (
	"cmp"
	"fmt"
	"math"
	"math/big"
	"slices"
)

// A Tolerance says how far a number may lie from the aggregate m of a
// numeric strategy and still agree with it: x agrees when
//
//	|x − m| ≤ max(Absolute, Relative·|m|)
//
// The zero Tolerance is exact numeric equality, under which 18, 18.0 and
// "18" agree and 18.5 does not. The distance is computed without
// overflow: −1.7e308 and 1.7e308 lie 3.4e308 apart, not +Inf.
type Tolerance struct {
	// Absolute is the distance, ≥ 0, within which a number agrees.
	Absolute float64
	// Relative is the share of |m|, from 0 to 1, within which a number
	// agrees. At most 1, so that a number of the other sign than m never
	// agrees with it.
	Relative float64
}

// Agrees reports whether x agrees with the aggregate m.
func (t Tolerance) Agrees(x, m float64) bool {
	bound := max(t.Absolute, t.Relative*math.Abs(m))
	if x != 0 && m != 0 && math.Signbit(x) != math.Signbit(m) {
		// |x − m| > |m| ≥ Relative·|m| exactly, though the difference
		// may round to |m|: only Absolute admits the other sign.
		bound = t.Absolute
	}
	if d := math.Abs(x - m); !math.IsInf(d, 1) || math.IsInf(x, 0) || math.IsInf(m, 0) {
		return d <= bound
	}
	// x − m overflows: compare halves, which do not.
	return math.Abs(x/2-m/2) <= bound/2
}

// Check reports a bound that is negative, NaN or infinite, or a Relative
// above 1, with an error wrapping ErrInvalid.
func (t Tolerance) Check() error {
	for _, b := range []struct {
		name string
		v    float64
	}{{"absolute", t.Absolute}, {"relative", t.Relative}} {
		if !(b.v >= 0 && !math.IsInf(b.v, 1)) {
			return fmt.Errorf("%w: tolerance %s %v is not a finite number ≥ 0", ErrInvalid, b.name, b.v)
		}
	}
	if t.Relative > 1 {
		return fmt.Errorf("%w: tolerance relative %v is above 1, which would let a number of the other sign agree", ErrInvalid, t.Relative)
	}
	return nil
}

// Median is the Aggregator of StrategyMedian: the aggregate of the
// replicas' numbers (see ParseNumber) is their lower median, or, with
// Reliabilities set, their weighted lower median.
//
// The lower median of n numbers is the ⌈n/2⌉-th smallest (the middle one
// of 3 or 5, the smaller middle one of 2 or 4), so that the aggregate is
// always a number some replica answered. The weighted lower median is the
// smallest number x (equal numbers taken in replica order) at which the
// summed weights of the numbers up to x reach half of all the weights;
// each number weighs Weight of its session's reliability, and when every
// weight is 0 they weigh alike. With equal weights it is the lower
// median.
//
// A cast vote whose answer holds no number is no vote: it counts in
// Answered, in neither Agreeing nor Against. A number agrees when the
// Tolerance says so around the aggregate m: Agreeing counts those,
// Against the other numbers (plus the failed votes under
// FailuresNegative, which win when they are at least as many, or weigh
// at least as much, as the agreeing numbers, each side's weights summed
// smallest first as Weighted sums a group's), and Agreement is
// Agreeing/(Agreeing+Against). The winner is the first agreeing vote
// (Winner, Label, Answer are its own), and Value is m. The Confidence is
// numericConfidence's: Posterior(Agreeing, Against), or with
// Reliabilities, the Credence of the agreeing numbers' summed weight
// against the rest's, tempered as for Weighted.
//
// Under FailHard a number outside the tolerance is a disagreement.
// Decided reports an outcome decided only when no values the running
// replicas could return (any numbers, or none) would move the aggregate
// beyond the tolerance around the current one; under FailHard or
// FailuresNegative, or with more than 12 replicas still running (whose
// 3^n ends it would try), it waits for every replica.
type Median struct {
	// Tolerance is the agreement rule; the zero value is exact equality.
	Tolerance Tolerance
	// Reliabilities, when set, weighs the numbers: the weighted lower
	// median. nil weighs them alike.
	Reliabilities *Reliabilities
	// Launched, when set, names the session of each replica by index,
	// so that Decided weighs a replica still running as its session; a
	// replica it does not name weighs Weight(MaxReliability).
	Launched []int64
}

// MedianOfMeans is the Aggregator of StrategyMedianOfMeans: the numbers
// (see ParseNumber), in replica order, are dealt into k = min(3, n)
// blocks, the j-th number (counting from 0) into block j mod k; the
// aggregate is the lower median of the blocks' means. Five numbers make
// the blocks {1st, 4th}, {2nd, 5th}, {3rd}; three make three blocks of
// one, so that the aggregate is their median; two make two blocks, and
// the aggregate is the smaller number. Agreement, the winner and the
// confidence follow the rules of Median (unweighted); the aggregate need
// not be any replica's number, and when no number agrees with it there
// is no winner.
type MedianOfMeans struct {
	// Tolerance is the agreement rule; the zero value is exact equality.
	Tolerance Tolerance
}

// A number is the number of one cast vote.
type number struct {
	replica int
	x, w    float64
}

// lowerMedian returns the weighted lower median of ns (see Median); it
// sorts ns. Equal weights (every weight 0 among them) are counted, and
// other weights summed exactly, so that the median is the one Median
// defines and not one that rounding picked: summed in float64, the
// numbers up to x weighing exactly half of the whole could fall short.
func lowerMedian(ns []number) float64 {
	slices.SortStableFunc(ns, func(a, b number) int { return cmp.Compare(a.x, b.x) })
	if !slices.ContainsFunc(ns, func(n number) bool { return n.w != ns[0].w }) {
		return ns[(len(ns)-1)/2].x // they weigh alike: the ⌈n/2⌉-th
	}
	var total, sum, w big.Float
	total.SetPrec(exactSum)
	sum.SetPrec(exactSum)
	for _, n := range ns {
		total.Add(&total, w.SetFloat64(n.w))
	}
	half := total.SetMantExp(&total, -1) // exact
	for _, n := range ns {
		if sum.Add(&sum, w.SetFloat64(n.w)).Cmp(half) >= 0 {
			return n.x
		}
	}
	return ns[len(ns)-1].x // unreachable for non-empty ns: the last sum is total
}

// exactSum is a precision in bits that holds every sum of fewer than
// 2^64 finite float64 values ≥ 0 exactly: from the least subnormal bit,
// 2^−1074, to the largest sum, below 2^(1024+64).
const exactSum = 1074 + 1024 + 64

// medianOfMeans returns the aggregate of MedianOfMeans of ns, in replica
// order.
func medianOfMeans(ns []number) float64 {
	k := min(3, len(ns))
	// Each block's mean is updated in turn (m += (x − m)/count), never
	// from a sum, which overflows for numbers near the largest float64.
	means, counts := make([]number, k), make([]float64, k)
	for j, n := range ns {
		b := j % k
		counts[b]++
		means[b] = number{replica: b, x: means[b].x + (n.x/counts[b] - means[b].x/counts[b])}
	}
	return lowerMedian(means)
}

// Aggregate implements Aggregator.
func (m Median) Aggregate(votes []Vote, p Policy) (Outcome, error) {
	return aggregateNumbers(StrategyMedian, votes, p, m.Tolerance, m.Reliabilities, m.Launched, func(ns []number) float64 {
		return lowerMedian(slices.Clone(ns))
	})
}

// Decided implements Aggregator.
func (m Median) Decided(votes []Vote, p Policy) bool {
	weigh := func(i int) float64 {
		if m.Reliabilities == nil {
			return 1
		}
		if i < len(m.Launched) {
			return Weight(m.Reliabilities.Of(m.Launched[i]))
		}
		return Weight(MaxReliability)
	}
	return decidedNumbers(votes, p, m.Tolerance, m.Reliabilities, weigh, func(ns []number) float64 {
		return lowerMedian(slices.Clone(ns))
	})
}

// Aggregate implements Aggregator.
func (m MedianOfMeans) Aggregate(votes []Vote, p Policy) (Outcome, error) {
	return aggregateNumbers(StrategyMedianOfMeans, votes, p, m.Tolerance, nil, nil, medianOfMeans)
}

// Decided implements Aggregator.
func (m MedianOfMeans) Decided(votes []Vote, p Policy) bool {
	return decidedNumbers(votes, p, m.Tolerance, nil, func(int) float64 { return 1 }, medianOfMeans)
}

// numbers returns the numbers of the cast votes in replica order, each
// weighing Weight of its session's reliability under rel (1 when rel is
// nil), and counts the votes into t. pending allows empty labels.
func numbers(votes []Vote, p Policy, tol Tolerance, rel *Reliabilities, pending bool) ([]number, tally, error) {
	var t tally
	if err := p.check(); err != nil {
		return nil, t, err
	}
	if err := tol.Check(); err != nil {
		return nil, t, err
	}
	if rel != nil {
		if err := rel.check(); err != nil {
			return nil, t, err
		}
	}
	if len(votes) == 0 {
		return nil, t, fmt.Errorf("%w: no votes", ErrInvalid)
	}
	var ns []number
	for i, v := range votes {
		switch {
		case v.Label == "":
			if !pending {
				return nil, t, fmt.Errorf("%w: replica %d: empty label", ErrInvalid, i)
			}
			t.pending++
		case v.Label == LabelCancelled:
			t.cancelled++
		case v.Label.Failed():
			t.failed++
		default:
			t.cast++
			x, err := ParseNumber(v.Answer)
			if err != nil {
				continue // no vote
			}
			w := 1.0
			if rel != nil {
				w = Weight(rel.Of(v.Session))
			}
			ns = append(ns, number{replica: i, x: x, w: w})
		}
	}
	return ns, t, nil
}

// aggregateNumbers is the Aggregate of a numeric strategy s whose
// aggregate of the numbers, in replica order, is agg; launched names the
// session of each replica (Median.Launched), whose failure weighs as its
// session's when a Runner abandoned it.
func aggregateNumbers(s Strategy, votes []Vote, p Policy, tol Tolerance, rel *Reliabilities, launched []int64, agg func([]number) float64) (Outcome, error) {
	ns, t, err := numbers(votes, p, tol, rel, false)
	if err != nil {
		return Outcome{}, err
	}
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
		Tolerance: tol,
	}
	for i, v := range votes {
		out.Verdicts[i] = v.Label
	}
	negative := p.Failures == FailuresNegative
	if rel != nil {
		out.Weights, out.Correlation = make([]float64, n), rel.Correlation
		for _, x := range ns {
			out.Weights[x.replica] = x.w
		}
		if negative {
			for i, v := range votes {
				if v.Label.Failed() {
					out.Weights[i] = Weight(rel.Of(sessionOf(v, i, launched)))
				}
			}
		}
	}
	if len(ns) > 0 {
		out.Value = agg(ns)
	}
	var agreeing, against int
	var againstScore float64
	var agreeWeights, failedWeights []float64
	for _, x := range ns {
		if tol.Agrees(x.x, out.Value) {
			agreeing++
			agreeWeights = append(agreeWeights, x.w)
			if out.Winner < 0 {
				out.Winner = x.replica
			}
		} else {
			against++
			againstScore += x.w
		}
	}
	agreeScore := sumAscending(agreeWeights)
	if negative {
		against += t.failed
		for i, v := range votes {
			if v.Label.Failed() {
				if rel != nil {
					failedWeights = append(failedWeights, out.Weights[i])
				} else {
					failedWeights = append(failedWeights, 1)
				}
			}
		}
		failedScore := sumAscending(failedWeights)
		againstScore += failedScore
		if out.Winner >= 0 && t.failed > 0 && (rel == nil && t.failed >= agreeing || rel != nil && failedScore >= agreeScore) {
			out.Winner = -1 // the failures win
		}
	}
	out.Disagreement = against > 0
	if out.Winner < 0 {
		out.Label = noWinnerLabel(votes)
		out.LowConfidence = true
		return finish(out, p, tally{cast: len(ns)})
	}
	w := votes[out.Winner]
	out.Label, out.Answer = w.Label, w.Answer
	out.Agreeing, out.Against = agreeing, against
	out.Agreement = float64(agreeing) / float64(agreeing+against)
	out.LowConfidence = out.Disagreement || 2*agreeing <= n-t.cancelled
	if rel != nil {
		out.Score = agreeScore
	}
	out.Confidence = numericConfidence(agreeing, against, agreeScore, againstScore, rel)
	return finish(out, p, tally{cast: len(ns)})
}

// sumAscending returns the sum of ws, summed smallest first so that it
// depends on the weights alone, not on their order, as Weighted sums a
// group's: the agreeing numbers and the failures tie exactly when they
// weigh the same, and the tie rule decides, not rounding. It sorts ws.
func sumAscending(ws []float64) float64 {
	slices.Sort(ws)
	var sum float64
	for _, w := range ws {
		sum += w
	}
	return sum
}

// numericConfidence is the confidence of a numeric outcome whose
// agreeing numbers count agreeing and weigh agreeScore, against the
// against votes that weigh againstScore: Posterior(agreeing, against)
// unweighted; with rel, the Credence of agreeScore against againstScore
// (one group when nothing is against), tempered by Tempering over every
// vote counted and rel's correlation, as Weighted states its confidence.
// It is the one place the numeric strategies compute a confidence.
func numericConfidence(agreeing, against int, agreeScore, againstScore float64, rel *Reliabilities) float64 {
	if rel == nil {
		return Posterior(agreeing, against)
	}
	scores := []float64{agreeScore}
	if against > 0 {
		scores = append(scores, againstScore)
	}
	return Credence(scores, 0, Tempering(agreeing+against, rel.Correlation))
}

// maxDecidedRunning bounds the replicas still running for which
// decidedNumbers tries every end (3^12 = 531441); with more it reports
// false, so the call waits, and 3^n never overflows an int.
const maxDecidedRunning = 12

// decidedNumbers is the Decided of a numeric strategy whose aggregate is
// agg; weigh gives the weight of replica i while it runs. It tries every
// way the running replicas could end (no number, a number below every
// other, or above every other: the aggregate is monotone in each number,
// so these bound it) and reports true when none moves the aggregate
// beyond the tolerance around the current one.
func decidedNumbers(votes []Vote, p Policy, tol Tolerance, rel *Reliabilities, weigh func(i int) float64, agg func([]number) float64) bool {
	ns, t, err := numbers(votes, p, tol, rel, true)
	if err != nil || t.pending == 0 {
		return true
	}
	if p.Disagreement == FailHard || p.Failures == FailuresNegative || len(ns) == 0 {
		return false
	}
	m := agg(ns)
	var running []int
	for i, v := range votes {
		if v.Label == "" {
			running = append(running, i)
		}
	}
	// No number lies beyond the largest double, and neither aggregate
	// sums numbers (medianOfMeans updates running means), so it bounds
	// every answer without overflow.
	const far = math.MaxFloat64
	if len(running) > maxDecidedRunning {
		return false // 3^len(running) ends are too many to try: wait
	}
	ends := 1
	for range running {
		ends *= 3
	}
	trial := make([]number, 0, len(votes))
	for e := 1; e < ends; e++ { // e = 0: every running replica gives no number
		trial = trial[:0]
		code, next := e, 0
		for i := range votes {
			for next < len(ns) && ns[next].replica < i {
				trial = append(trial, ns[next])
				next++
			}
			if next < len(ns) && ns[next].replica == i {
				continue
			}
			if votes[i].Label != "" {
				continue
			}
			switch code % 3 {
			case 1:
				trial = append(trial, number{replica: i, x: -far, w: weigh(i)})
			case 2:
				trial = append(trial, number{replica: i, x: far, w: weigh(i)})
			}
			code /= 3
		}
		trial = append(trial, ns[next:]...)
		if !tol.Agrees(agg(trial), m) {
			return false
		}
	}
	return true
}
