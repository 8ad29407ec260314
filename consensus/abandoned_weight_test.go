package consensus_test

import (
	"testing"

	"github.com/vouchkit/vouch/consensus"
)

// TestAggregate_abandonedFailureWeighsItsSession: a failure a Runner
// abandoned is recorded without a session; with failures as negative
// evidence, Weighted and a weighted Median weigh it as the session their
// Launched names for its replica, not as the prior of an unknown one.
func TestAggregate_abandonedFailureWeighsItsSession(t *testing.T) {
	rel := consensus.Reliabilities{Sessions: map[int64]float64{1: 0.7, 2: 0.7, 3: 0.98}}
	launched := []int64{1, 2, 3}
	p := consensus.Policy{Failures: consensus.FailuresNegative}
	want := consensus.Weight(0.98)
	for name, agg := range map[string]consensus.Aggregator{
		"weighted": consensus.Weighted{Reliabilities: rel, Launched: launched},
		"median":   consensus.Median{Reliabilities: &rel, Launched: launched},
	} {
		votes := []consensus.Vote{
			{Session: 1, Label: "OK", Answer: 4},
			{Session: 2, Label: "OK", Answer: 4},
			{Label: consensus.LabelTimeout}, // abandoned: no session
		}
		out, err := agg.Aggregate(votes, p)
		if out.Weights == nil {
			t.Fatalf("%s: no weights (%v)", name, err)
		}
		if out.Weights[2] != want {
			t.Errorf("%s: the abandoned failure weighs %v, want %v, its session's", name, out.Weights[2], want)
		}
	}
}
