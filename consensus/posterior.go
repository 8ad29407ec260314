package consensus

import "math"

// Posterior is the confidence of an outcome: the probability that the
// winning answer is the one a majority of the panel would give, after
// agreeing votes for it and against votes for anything else.
//
// The panel's share θ of the winning answer gets a uniform prior, so that
// after the votes θ follows Beta(agreeing+1, against+1), and Posterior is
// P(θ > 1/2), which for these whole-number parameters is the chance that
// at most agreeing heads come up in agreeing+against+1 tosses of a fair
// coin:
//
//	Posterior(a, d) = Σ_{k=0..a} C(a+d+1, k) / 2^(a+d+1)
//
// So one vote gives 3/4, two agreeing 7/8, three 15/16, five 63/64; 2 of 3
// gives 11/16, 3 of 4 gives 13/16, 4 of 5 gives 57/64, 3 of 5 gives
// 21/32; a tie gives 1/2. It depends only on the two counts, so anyone can
// recompute it from the labels a response records. Negative counts are
// taken as 0.
//
// Up to 61 votes in all the sum is computed in integers and rounded once,
// so the result is the exact value's nearest float64. Beyond, a tie gives
// exactly 1/2, the side above 1/2 is exactly 1 less the side below
// (Posterior(d, a) for a > d), and the side below is summed in floating
// point from its largest term, within a relative 1e-12 of the exact
// value; beyond 2^32 votes in all it is the normal approximation
// erfc((d−a)/√(2(a+d+1)))/2, within 1e-11. The work is bounded for any
// counts.
func Posterior(agreeing, against int) float64 {
	a, d := uint64(max(agreeing, 0)), uint64(max(against, 0))
	n := a + d + 1 // at most 2·MaxInt+1, which uint64 holds
	switch {
	case n <= 62: // exact in integers
		var sum, c uint64 = 0, 1 // c = C(n, k)
		for k := uint64(0); k <= a; k++ {
			sum += c
			c = c * (n - k) / (k + 1)
		}
		return float64(sum) / math.Ldexp(1, int(n))
	case a == d:
		return 0.5
	case a > d:
		return 1 - lowerTail(d, n)
	}
	return lowerTail(a, n)
}

// maxSummed is the most tosses lowerTail sums term by term: about
// 5·2^16 terms at most.
const maxSummed = 1 << 32

// lowerTail returns P(Bin(n, 1/2) ≤ m) for m < (n−1)/2: the terms from
// k = m down, each the last times k/(n−k+1), until the rest, bounded by a
// geometric series, no longer counts; above maxSummed tosses, the normal
// approximation with continuity correction.
func lowerTail(m, n uint64) float64 {
	if n > maxSummed {
		return math.Erfc(float64(n-1-2*m)/math.Sqrt(2*float64(n))) / 2
	}
	if m == 0 {
		return math.Ldexp(1, -int(min(n, 1100)))
	}
	t := binomialHalf(m, n)
	var sum float64
	for k := m; t > 0; k-- {
		sum += t
		if k == 0 {
			break
		}
		r := float64(k) / float64(n-k+1)
		if t *= r; t <= (1-r)*sum*0x1p-55 {
			break // the rest is below t/(1−r)
		}
	}
	return sum
}

// binomialHalf returns C(n, k)/2^n for 0 < k < n by the saddle-point
// expansion of Loader (Fast and Accurate Computation of Binomial
// Probabilities, 2000), accurate to a few units in the last place.
func binomialHalf(k, n uint64) float64 {
	x, y, h := float64(k), float64(n-k), float64(n)/2
	lc := stirlerr(float64(n)) - stirlerr(x) - stirlerr(y) - bd0(x, h) - bd0(y, h)
	lf := math.Log(2*math.Pi) + math.Log(x) + math.Log1p(-x/float64(n))
	return math.Exp(lc - lf/2)
}

// stirlerr returns log(n!) − log(√(2πn)·(n/e)^n) for a whole n ≥ 1.
func stirlerr(n float64) float64 {
	const s0, s1, s2, s3, s4 = 1.0 / 12, 1.0 / 360, 1.0 / 1260, 1.0 / 1680, 1.0 / 1188
	nn := n * n
	switch {
	case n <= 15:
		lg, _ := math.Lgamma(n + 1)
		return lg - (n+0.5)*math.Log(n) + n - math.Log(2*math.Pi)/2
	case n > 500:
		return (s0 - s1/nn) / n
	case n > 80:
		return (s0 - (s1-s2/nn)/nn) / n
	case n > 35:
		return (s0 - (s1-(s2-s3/nn)/nn)/nn) / n
	}
	return (s0 - (s1-(s2-(s3-s4/nn)/nn)/nn)/nn) / n
}

// bd0 returns x·log(x/np) + np − x, by its series when x is near np.
func bd0(x, np float64) float64 {
	if math.Abs(x-np) < 0.1*(x+np) {
		v := (x - np) / (x + np)
		s := (x - np) * v
		ej := 2 * x * v
		v *= v
		for j := 1; j < 1000; j++ {
			ej *= v
			s1 := s + ej/float64(2*j+1)
			if s1 == s {
				return s1
			}
			s = s1
		}
	}
	return x*math.Log(x/np) + np - x
}
