package consensus_test

import (
	"context"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/vouchkit/vouch/consensus"
)

// TestRunner_Run_simulation runs 10,000 validate calls through the Runner
// with replicas that each give the wrong verdict with probability 0.2,
// independently. Majority is right when at most a minority errs, so its
// accuracy is the binomial sum P(errors <= (n-1)/2): 0.896 for 3 replicas
// (0.8³ + 3·0.8²·0.2) and 0.94208 for 5. Early quorum must not change it.
// The measured accuracy must fall within 4 standard errors of that value.
func TestRunner_Run_simulation(t *testing.T) {
	const (
		calls     = 10_000
		errorRate = 0.2
	)
	for _, tt := range []struct {
		replicas int
		want     float64
	}{
		{3, 0.896},
		{5, 0.94208},
	} {
		rng := rand.New(rand.NewPCG(4, uint64(tt.replicas)))
		var r consensus.Runner
		right := 0
		wrong := make([]bool, tt.replicas)
		for range calls {
			truth, lie := valid, invalid
			if rng.IntN(2) == 0 {
				truth, lie = invalid, valid
			}
			for i := range wrong {
				wrong[i] = rng.Float64() < errorRate
			}
			out, err := r.Run(context.Background(), tt.replicas, func(ctx context.Context, i int) consensus.Vote {
				if wrong[i] {
					return consensus.Vote{Label: lie}
				}
				return consensus.Vote{Label: truth}
			})
			if err != nil {
				t.Fatal(err)
			}
			if out.Label == truth {
				right++
			}
		}
		got := float64(right) / calls
		sigma := math.Sqrt(tt.want * (1 - tt.want) / calls)
		if math.Abs(got-tt.want) > 4*sigma {
			t.Errorf("%d replicas: accuracy %.4f, want %.4f ± %.4f", tt.replicas, got, tt.want, 4*sigma)
		}
		t.Logf("%d replicas: accuracy %.4f (binomial %.4f, σ %.4f)", tt.replicas, got, tt.want, sigma)
	}
}
