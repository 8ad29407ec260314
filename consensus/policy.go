package consensus

import "fmt"

// A DisagreementPolicy says what happens when replicas disagree or all fail
// (the disagreement_policy of a version 3 consensus block).
type DisagreementPolicy string

// The disagreement policies of version 3. The zero value means BestEffort.
const (
	// ReturnAll returns the outcome with every replica's vote; the caller
	// reports all replica results beside the summary.
	ReturnAll DisagreementPolicy = "return_all"
	// FailHard turns a disagreement, or the failure of every replica, into
	// an *OutcomeError.
	FailHard DisagreementPolicy = "fail_hard"
	// BestEffort returns the winner, tagged LowConfidence when replicas
	// disagree.
	BestEffort DisagreementPolicy = "best_effort"
)

// A FailureMode says how TIMEOUT and ERROR votes count.
type FailureMode string

// The failure modes. The zero value means FailuresNonVotes.
const (
	// FailuresNonVotes ignores failed replicas: the winner is chosen among
	// the cast votes.
	FailuresNonVotes FailureMode = "non_votes"
	// FailuresNegative counts failed replicas as one group of negative
	// evidence that competes with the cast votes: when it is at least as
	// large as the largest group of agreeing votes, there is no winner.
	FailuresNegative FailureMode = "negative_evidence"
)

// A Policy holds the rules an Aggregator applies. The zero Policy is
// best_effort, with failures as non-votes and DefaultKey as the equivalence.
type Policy struct {
	// Disagreement is the disagreement policy; "" means BestEffort.
	Disagreement DisagreementPolicy
	// Failures says how TIMEOUT and ERROR count; "" means FailuresNonVotes.
	Failures FailureMode
	// Key maps an answer to a string; two answers are equivalent when their
	// keys are equal. It must be deterministic and safe for concurrent use.
	// An error makes aggregation fail. nil means DefaultKey.
	Key func(answer any) (string, error)
}

// check reports an unknown policy or failure mode.
func (p Policy) check() error {
	switch p.Disagreement {
	case "", ReturnAll, FailHard, BestEffort:
	default:
		return fmt.Errorf("%w: unknown disagreement policy %q", ErrInvalid, p.Disagreement)
	}
	switch p.Failures {
	case "", FailuresNonVotes, FailuresNegative:
	default:
		return fmt.Errorf("%w: unknown failure mode %q", ErrInvalid, p.Failures)
	}
	return nil
}

func (p Policy) key() func(any) (string, error) {
	if p.Key == nil {
		return DefaultKey
	}
	return p.Key
}
