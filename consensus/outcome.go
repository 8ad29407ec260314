package consensus

// An Outcome is the result of aggregating the votes of one job's replicas.
// It holds what the consensus block of a version 3 response reports (replicas,
// agreement, verdicts, strategy, confidence) plus the winner and every vote.
type Outcome struct {
	// Strategy is the aggregation strategy used.
	Strategy Strategy
	// Label is the winning group's label. With no winner it is the
	// commonest failure label (TIMEOUT or ERROR), or CANCELLED when no
	// replica failed, telling why no winner emerged.
	Label Label
	// Answer is the winning vote's answer (nil with no winner).
	Answer any
	// Winner is the index of the first vote of the winning group, -1 when
	// there is no winner.
	Winner int
	// Replicas is the number of replicas launched, len(Votes): those that
	// answered, failed or were cancelled.
	Replicas int
	// Answered counts the cast votes: the replicas that answered.
	Answered int
	// Failed counts the TIMEOUT and ERROR votes.
	Failed int
	// Cancelled counts the CANCELLED votes: replicas cut short before
	// they answered, which are no vote at all.
	Cancelled int
	// Agreeing is the size of the winning group, 0 with no winner.
	Agreeing int
	// Against counts the votes that count against the winner: the cast
	// votes outside the winning group, plus the failed votes under
	// FailuresNegative. With no winner it is 0.
	Against int
	// Agreement is Agreeing / (Agreeing + Against), the share of the
	// votes that back the winner: 2 of 3 gives 0.666…, 4 of 5 gives 0.8,
	// and 3 agreeing votes with 2 replicas cancelled give 1. 0 with no
	// winner.
	Agreement float64
	// Confidence is, under StrategyMajority, Posterior(Agreeing,
	// Against): the probability that the winner is the answer a majority
	// of the panel would give; under StrategyWeighted, the probability
	// that the winner is right given the votes and the voters'
	// reliabilities (see Weighted); under the numeric strategies, as
	// Median states it. 0 with no winner. See the package doc.
	Confidence float64
	// LowConfidence reports an outcome to act on with care: no winner, a
	// disagreement, or a winner backed by no more than half of the replicas
	// that reported.
	LowConfidence bool
	// Disagreement reports that some vote outside the winning group counts
	// against it: a cast vote, or under FailuresNegative a failed one.
	Disagreement bool
	// Verdicts holds one label per replica, in replica order.
	Verdicts []Label
	// Votes holds every replica's vote, in replica order.
	Votes []Vote
	// Weights holds the weight each vote counted with under
	// StrategyWeighted and a weighted Median, in replica order (0 for a
	// vote that counted in no group); nil otherwise.
	Weights []float64
	// Score is the winner's summed weight under StrategyWeighted, and
	// the agreeing numbers' under a weighted Median (0 with no winner, and
	// unweighted).
	Score float64
	// Correlation is the correlation of the voters' errors the weighted
	// confidence was tempered by (see Tempering); 0 under
	// StrategyMajority.
	Correlation float64
	// Value is the aggregate of the numbers under StrategyMedian and
	// StrategyMedianOfMeans (0 when no vote held a number).
	Value float64
	// Tolerance is the agreement rule of a numeric strategy.
	Tolerance Tolerance
}

// numeric reports whether s aggregates numbers.
func (s Strategy) numeric() bool { return s == StrategyMedian || s == StrategyMedianOfMeans }

// Backers returns the indices of the votes in the winning group, in
// replica order: the cast votes with the winner's label whose answers are
// equivalent to the winner's under key (nil means DefaultKey), as
// Aggregate grouped them; under a numeric strategy, the cast votes whose
// numbers agree with Value within Tolerance (key plays no part). It
// returns nil when there is no winner.
func (o Outcome) Backers(key func(answer any) (string, error)) []int {
	if o.Winner < 0 || o.Winner >= len(o.Votes) {
		return nil
	}
	if o.Strategy.numeric() {
		var out []int
		for i, v := range o.Votes {
			if v.Label == "" || v.Label == LabelCancelled || v.Label.Failed() {
				continue
			}
			if x, err := ParseNumber(v.Answer); err == nil && o.Tolerance.Agrees(x, o.Value) {
				out = append(out, i)
			}
		}
		return out
	}
	if key == nil {
		key = DefaultKey
	}
	answer := o.Votes[o.Winner].Answer
	var want string
	if answer != nil {
		var err error
		if want, err = key(answer); err != nil {
			return nil
		}
	}
	var out []int
	for i, v := range o.Votes {
		switch {
		case v.Label != o.Label:
		case answer == nil && v.Answer == nil: // verdicts agree by label
			out = append(out, i)
		case answer != nil && v.Answer != nil:
			if k, err := key(v.Answer); err == nil && k == want {
				out = append(out, i)
			}
		}
	}
	return out
}
