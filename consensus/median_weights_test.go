package consensus_test

import (
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/consensus"
)

// TestMedian_weightedHalfExactly checks the weighted lower median where
// the numbers up to one of them weigh exactly half of all the weights:
// that number is the median, as Median defines it, however the weights
// round when summed in another order.
func TestMedian_weightedHalfExactly(t *testing.T) {
	weighted := func(reliabilities ...float64) (consensus.Median, []consensus.Vote) {
		rel := &consensus.Reliabilities{Sessions: map[int64]float64{}}
		raw := make([]string, len(reliabilities))
		for i, p := range reliabilities {
			rel.Sessions[int64(i+1)] = p
			raw[i] = fmt.Sprint(10 * (i + 1))
		}
		return consensus.Median{Reliabilities: rel}, outputs(raw...)
	}
	equal := make([]float64, 12)
	for i := range equal {
		equal[i] = 0.6
	}
	for _, tc := range []struct {
		name          string
		reliabilities []float64
		want          float64
	}{
		// 10 and 20 weigh as much as 30 and 40.
		{"mirrored", []float64{0.6, 0.9, 0.9, 0.6}, 20},
		{"alternating", []float64{0.8, 0.9, 0.8, 0.9}, 20},
		// With equal weights it is the lower median: the 6th of 12.
		{"equal weights", equal, 60},
	} {
		m, votes := weighted(tc.reliabilities...)
		out, err := m.Aggregate(votes, consensus.Policy{})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if diff := cmp.Diff(tc.want, out.Value); diff != "" {
			t.Errorf("%s: Value (-want +got):\n%s", tc.name, diff)
		}
	}
}

// TestMedian_failuresWeighAsMuch checks a weighted Median under
// FailuresNegative whose failed replicas weigh exactly as much as the
// agreeing numbers, their sessions the same but in another order: the
// failures win the tie, as Median says, whatever order the weights are
// summed in.
func TestMedian_failuresWeighAsMuch(t *testing.T) {
	votes := outputs("7", "7", "7", "ERROR", "ERROR", "ERROR")
	rel := &consensus.Reliabilities{Sessions: map[int64]float64{1: 0.55, 2: 0.75, 3: 0.99, 4: 0.99, 5: 0.75, 6: 0.55}}
	out, err := consensus.Median{Reliabilities: rel}.Aggregate(votes, consensus.Policy{Failures: consensus.FailuresNegative})
	if err != nil {
		t.Fatal(err)
	}
	type result struct {
		Winner        int
		Label         consensus.Label
		LowConfidence bool
	}
	want := result{Winner: -1, Label: consensus.LabelError, LowConfidence: true}
	if diff := cmp.Diff(want, result{out.Winner, out.Label, out.LowConfidence}); diff != "" {
		t.Errorf("outcome (-want +got):\n%s", diff)
	}
}
