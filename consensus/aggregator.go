package consensus

import "fmt"

// A Strategy names an aggregation strategy (consensus.aggregation on the wire).
type Strategy string

// The strategies the interface names. Version 3 offers StrategyMajority,
// StrategyWeighted, StrategyMedian and StrategyMedianOfMeans;
// StrategyModelEnsemble is reserved and For reports it as not available.
const (
	StrategyMajority      Strategy = "majority"
	StrategyWeighted      Strategy = "weighted"
	StrategyMedian        Strategy = "median"
	StrategyMedianOfMeans Strategy = "median_of_means"
	StrategyModelEnsemble Strategy = "model_ensemble"
)

// An Aggregator combines the votes of the replicas of one job into an
// Outcome. Implementations are pure: no clock, context or goroutines; they
// must not modify the votes and must be safe for concurrent use.
type Aggregator interface {
	// Aggregate combines votes, one per replica launched in replica order,
	// each with a non-empty label, into an outcome.
	//
	// Under FailHard, a disagreement or the failure of every replica returns
	// the outcome together with an *OutcomeError that carries the same
	// outcome. Bad input (no votes, an empty label, an unknown policy, an
	// answer Policy.Key rejects) returns a zero Outcome and an error wrapping
	// ErrInvalid.
	Aggregate(votes []Vote, p Policy) (Outcome, error)

	// Decided reports whether the votes still to come can no longer change
	// the outcome's winner and, under FailHard, whether Aggregate fails.
	// votes holds one entry per replica launched, in replica order; an entry
	// with an empty label is a replica still running. Decided returns true
	// when no replica is running, and for input Aggregate would reject.
	Decided(votes []Vote, p Policy) bool
}

// For returns the Aggregator of strategy s. The empty strategy means
// StrategyMajority; StrategyWeighted gives the zero Weighted (every
// session DefaultReliability), whose Reliabilities a caller sets;
// StrategyMedian and StrategyMedianOfMeans give the zero Median and
// MedianOfMeans (exact equality, unweighted). The strategy reserved for
// later versions returns an error wrapping ErrNotAvailable; any other
// name, one wrapping ErrInvalid.
func For(s Strategy) (Aggregator, error) {
	switch s {
	case "", StrategyMajority:
		return Majority{}, nil
	case StrategyWeighted:
		return Weighted{}, nil
	case StrategyMedian:
		return Median{}, nil
	case StrategyMedianOfMeans:
		return MedianOfMeans{}, nil
	case StrategyModelEnsemble:
		return nil, fmt.Errorf("%w: %q", ErrNotAvailable, s)
	default:
		return nil, fmt.Errorf("%w: unknown strategy %q", ErrInvalid, s)
	}
}
