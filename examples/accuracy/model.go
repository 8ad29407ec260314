package main

import (
	"math"

	"github.com/vouchkit/vouch/router"
)

// The worker model. A claim is easy or hard; a worker's chance of judging
// it wrongly, and the confidence it reports, depend on that difficulty:
//
//	difficulty  share  error of a worker of error rate p  reported confidence
//	easy        90%    (p - hardShare*hardError) / (1 - hardShare)   uniform on [0.70, 1.00)
//	hard        10%    0.5: a coin flip                   uniform on [0.40, 0.90)
//
// so a worker's error rate over the whole workload is exactly p, and the
// binomial majority of p is the reference a uniform-difficulty world
// would give. The confidence depends on the difficulty only, not on
// whether this answer is right: a wrong answer draws its confidence from
// the same distribution as a right one. Confidence is therefore
// informative (a low one flags a hard claim) but imperfect (it never
// flags the errors made on easy claims).
//
// The -calibrated what-if changes one thing: a wrong answer reports its
// confidence as if the claim were hard, so that confidence also flags
// errors. It is not the model the tables are read against; it shows what
// the adaptive rule would need from its workers.
const (
	hardShare = 0.10
	hardError = 0.5

	// easyWorkload is the error rate of the second workload, where
	// workers err on 2% of the easy claims: 0.9 × 0.02 + 0.1 × 0.5.
	easyWorkload = 0.068

	easyConfLow, easyConfHigh = 0.70, 1.00
	hardConfLow, hardConfHigh = 0.40, 0.90
)

// Purposes of the uniform draws: each is its own stream.
const (
	streamDifficulty uint64 = iota + 1
	streamTruth
	streamError
	streamConfidence
	streamLatency
)

// claim is one claim of the workload.
type claim struct {
	hard  bool
	truth router.Verdict // VALID or INVALID, half each
}

// workload returns the n claims that every tier judges, drawn from seed.
func workload(seed uint64, n int) []claim {
	claims := make([]claim, n)
	for i := range claims {
		claims[i].hard = uniform(seed, streamDifficulty, uint64(i)) < hardShare
		claims[i].truth = router.VerdictValid
		if uniform(seed, streamTruth, uint64(i)) < 0.5 {
			claims[i].truth = router.VerdictInvalid
		}
	}
	return claims
}

// errorOn returns the chance that a worker of error rate p judges a claim
// of the given difficulty wrongly.
func errorOn(p float64, hard bool) float64 {
	if hard {
		return hardError
	}
	return (p - hardShare*hardError) / (1 - hardShare)
}

// answer is what one worker says of one claim.
type answer struct {
	verdict    router.Verdict
	confidence float64
	latency    float64 // orders the replicas of a step: the smallest answers first
}

// judge returns the answer of session s to claim c (number i), from a
// worker of error rate p. The draws depend on the seed, the claim and the
// session only: a session says the same of a claim whichever tier asks,
// and whatever the error rate (a worker of error rate 0.3 errs wherever
// one of 0.1 does, and more often), so that the comparisons share their
// luck. With calibrated, a wrong answer reports a hard claim's confidence.
func judge(seed uint64, p float64, calibrated bool, i int, c claim, s router.SessionID) answer {
	keys := func(stream uint64) float64 {
		return uniform(seed, stream, uint64(i), uint64(s))
	}
	a := answer{verdict: c.truth, latency: keys(streamLatency)}
	if keys(streamError) < errorOn(p, c.hard) {
		a.verdict = flip(c.truth)
	}
	low, high := easyConfLow, easyConfHigh
	if c.hard || (calibrated && a.verdict != c.truth) {
		low, high = hardConfLow, hardConfHigh
	}
	a.confidence = low + (high-low)*keys(streamConfidence)
	return a
}

func flip(v router.Verdict) router.Verdict {
	if v == router.VerdictValid {
		return router.VerdictInvalid
	}
	return router.VerdictValid
}

// uniform returns a number in [0, 1) that depends only on its keys: a
// SplitMix64 hash of them, so that every draw can be made in any order,
// from any goroutine, and still be the same.
func uniform(keys ...uint64) float64 {
	h := uint64(0x243f6a8885a308d3)
	for _, k := range keys {
		h = splitmix(h ^ k)
	}
	return float64(h>>11) / (1 << 53)
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

// majority returns the chance that a strict majority of n independent
// replicas, each wrong with chance e, is right (n odd).
func majority(n int, e float64) float64 {
	var sum float64
	for k := n/2 + 1; k <= n; k++ {
		sum += binomial(n, k) * math.Pow(1-e, float64(k)) * math.Pow(e, float64(n-k))
	}
	return sum
}

func binomial(n, k int) float64 {
	r := 1.0
	for i := 1; i <= k; i++ {
		r = r * float64(n-k+i) / float64(i)
	}
	return r
}

// expected is what the model predicts for a tier that runs one step of n
// replicas: the chance of a correct status, and of a decisive one.
// best_effort answers the majority; fail_hard (oracle) answers only when
// all n agree. It averages over the two difficulties.
func expected(p float64, n int, failHard bool) (accuracy, coverage float64) {
	for _, hard := range []bool{false, true} {
		w, e := 1-hardShare, errorOn(p, hard)
		if hard {
			w = hardShare
		}
		if failHard {
			right, wrong := math.Pow(1-e, float64(n)), math.Pow(e, float64(n))
			accuracy += w * right
			coverage += w * (right + wrong)
			continue
		}
		accuracy += w * majority(n, e)
		coverage += w
	}
	return accuracy, coverage
}
