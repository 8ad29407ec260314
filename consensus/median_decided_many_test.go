package consensus_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/vouchkit/vouch/consensus"
)

// TestMedian_DecidedManyRunning: with one number in and 40 replicas
// still running, whose numbers could move the median anywhere, Decided
// is false for Median and MedianOfMeans (the count of the running
// replicas' ends, 3^40, overflowed and read as decided); and a Runner of
// 41 replicas, the first answering 18 at once and the rest 100, reports
// the median 100 rather than stopping after the first vote.
func TestMedian_DecidedManyRunning(t *testing.T) {
	votes := make([]consensus.Vote, 41)
	votes[0] = consensus.Vote{Label: consensus.LabelOK, Answer: json.RawMessage(`18`)}
	for name, agg := range map[string]consensus.Aggregator{"median": consensus.Median{}, "median_of_means": consensus.MedianOfMeans{}} {
		if agg.Decided(votes, consensus.Policy{}) {
			t.Errorf("%s: Decided = true with one number in and 40 replicas running", name)
		}
	}
	r := &consensus.Runner{Aggregator: consensus.Median{}, Policy: consensus.Policy{Disagreement: consensus.BestEffort}}
	out, err := r.Run(context.Background(), 41, func(ctx context.Context, i int) consensus.Vote {
		if i == 0 {
			return consensus.Vote{Label: consensus.LabelOK, Answer: json.RawMessage(`18`)}
		}
		select {
		case <-time.After(20 * time.Millisecond):
			return consensus.Vote{Label: consensus.LabelOK, Answer: json.RawMessage(`100`)}
		case <-ctx.Done():
			return consensus.Vote{Label: consensus.LabelCancelled}
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if out.Value != 100 {
		t.Errorf("median %v after %d answered, %d cancelled; want 100", out.Value, out.Answered, out.Cancelled)
	}
}
