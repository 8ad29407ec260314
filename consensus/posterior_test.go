package consensus_test

import (
	"math/big"
	"testing"

	"github.com/vouchkit/vouch/consensus"
)

// exactPosterior returns Posterior(a, d) in exact arithmetic, rounded to
// the nearest float64: Σ_{k=0..a} C(n, k) / 2^n, n = a+d+1.
func exactPosterior(a, d int) float64 {
	n := a + d + 1
	sum, c := new(big.Int), big.NewInt(1)
	for k := 0; k <= a; k++ {
		sum.Add(sum, c)
		c.Mul(c, big.NewInt(int64(n-k)))
		c.Quo(c, big.NewInt(int64(k+1)))
	}
	r := new(big.Rat).SetFrac(sum, new(big.Int).Lsh(big.NewInt(1), uint(n)))
	f, _ := r.Float64()
	return f
}

// TestPosterior_small pins Posterior for every tally of up to 61 votes
// (62 tosses): each is the exact sum rounded once to a float64, the
// values the confidences and accuracy figures already published rest on.
func TestPosterior_small(t *testing.T) {
	for a := 0; a <= 61; a++ {
		for d := 0; a+d+1 <= 62; d++ {
			if got, want := consensus.Posterior(a, d), exactPosterior(a, d); got != want {
				t.Errorf("Posterior(%d, %d) = %x, want %x", a, d, got, want)
			}
		}
	}
	for _, tt := range []struct {
		agreeing, against int
		want              float64
	}{
		{61, 0, 0x1p+00},
		{0, 61, 0x1p-62},
		{30, 31, 0x1.cc53bb077e99ep-02},
		{31, 30, 0x1.19d6227c40b31p-01},
		{20, 41, 0x1.d47fda057040cp-09},
		{45, 16, 0x1.fff471b8d1752p-01},
		{10, 5, 0x1.ca36p-01},
	} {
		if got := consensus.Posterior(tt.agreeing, tt.against); got != tt.want {
			t.Errorf("Posterior(%d, %d) = %x, want %x", tt.agreeing, tt.against, got, tt.want)
		}
	}
}
