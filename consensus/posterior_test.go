package consensus_test

import (
	"math"
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

// TestPosterior_large checks Posterior beyond 61 votes: a tie is exactly
// 1/2, the larger of the two sides is exactly the complement of the
// smaller, more agreeing votes never lower it and more against never
// raise it, it stays within a relative 1e-12 of the exact sum on its
// smaller side (1e-15 in all), and it returns for any counts, however
// large.
func TestPosterior_large(t *testing.T) {
	for _, k := range []int{31, 40, 200, 1 << 20, 1 << 40, math.MaxInt} {
		if got := consensus.Posterior(k, k); got != 0.5 {
			t.Errorf("Posterior(%d, %d) = %v, want 1/2", k, k, got)
		}
	}
	for n := 63; n <= 400; n += 11 {
		for a := 0; a < n; a++ {
			d := n - 1 - a
			got, want := consensus.Posterior(a, d), exactPosterior(a, d)
			if a > d && got != 1-consensus.Posterior(d, a) {
				t.Errorf("Posterior(%d, %d) = %v, not 1 − Posterior(%d, %d) = %v", a, d, got, d, a, 1-consensus.Posterior(d, a))
			}
			if a < d && math.Abs(got-want) > 1e-12*want || math.Abs(got-want) > 1e-15 {
				t.Errorf("Posterior(%d, %d) = %v, want %v", a, d, got, want)
			}
		}
	}
	for a := 0; a <= 150; a++ {
		for d := 0; d <= 150; d++ {
			p := consensus.Posterior(a, d)
			if up := consensus.Posterior(a+1, d); up < p {
				t.Errorf("Posterior(%d, %d) = %v < Posterior(%d, %d) = %v", a+1, d, up, a, d, p)
			}
			if down := consensus.Posterior(a, d+1); down > p {
				t.Errorf("Posterior(%d, %d) = %v > Posterior(%d, %d) = %v", a, d+1, down, a, d, p)
			}
		}
	}
	for _, tt := range []struct {
		agreeing, against int
		lo, hi            float64
	}{
		{2e7, 0, 1, 1},
		{0, 2e7, 0, 0},
		{math.MaxInt, 0, 1, 1},
		{0, math.MaxInt, 0, 0},
		{math.MaxInt, math.MaxInt - 1, 0.5, 0.5 + 1e-9},
		{math.MaxInt - 1, math.MaxInt, 0.5 - 1e-9, 0.5},
	} {
		if got := consensus.Posterior(tt.agreeing, tt.against); got < tt.lo || got > tt.hi {
			t.Errorf("Posterior(%d, %d) = %v, want in [%v, %v]", tt.agreeing, tt.against, got, tt.lo, tt.hi)
		}
	}
	// Either side of 2^32 tosses, where the sum gives way to the normal
	// approximation: Φ(−2) = 0.0227501319…, give or take a vote.
	a, d := 1<<31-1<<16, 1<<31+1<<16-1
	p := consensus.Posterior(a, d)
	if p < 0.02275 || p > 0.02276 {
		t.Errorf("Posterior(%d, %d) = %v, want Φ(−2) within 1e-5", a, d, p)
	}
	if up := consensus.Posterior(a+1, d); up < p {
		t.Errorf("Posterior(%d, %d) = %v < Posterior(%d, %d) = %v", a+1, d, up, a, d, p)
	}
	if down := consensus.Posterior(a, d+1); down > p {
		t.Errorf("Posterior(%d, %d) = %v > Posterior(%d, %d) = %v", a, d+1, down, a, d, p)
	}
}
