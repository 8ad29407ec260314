package main

import (
	"encoding/json"

	"github.com/vouchkit/vouch/router"
)

// The worker model. A claim is easy, medium or hard; each session of a
// panel errs on it with a chance set by the claim's difficulty and the
// session (the tables of the workloads below), each session on its own
// draw, so that outside traps the sessions' errors are independent given
// the claim. A session reports a confidence that depends on the
// difficulty only: a wrong answer draws it from the same range as a right
// one, so the workers' own confidence flags hard claims, never the errors
// made on easy ones.
//
// The trap workload adds traps: claims that mislead. A trap is lured with
// chance lureChance, and then every session errs with chance lureError
// whatever its record: the sessions err together. A trap not lured is a
// medium claim.

// difficulty is how hard a claim is.
type difficulty int

const (
	easy difficulty = iota
	medium
	hard
	levels // the count of difficulties
)

func (d difficulty) String() string {
	return [...]string{"easy", "medium", "hard"}[d]
}

// shares are the shares of the difficulties in every workload.
var shares = [levels]float64{easy: 0.6, medium: 0.3, hard: 0.1}

// reportedConfidence is the range a worker's reported confidence is drawn
// from, uniformly, by difficulty.
var reportedConfidence = [levels][2]float64{easy: {0.70, 1.00}, medium: {0.55, 0.95}, hard: {0.40, 0.90}}

// The traps of the trap workload.
const (
	lureChance = 0.4  // the chance that a trap misleads the panel
	lureError  = 0.75 // every session's chance of erring on a trap that misleads
)

// panelSize is the number of sessions of a panel: ids 1 to panelSize,
// each in a worker pool of its own.
const panelSize = 5

// A workload is a panel of sessions and the claims they judge.
type workload struct {
	name  string // short, used in flags and file names
	title string
	// errors are each session's chances of erring, by difficulty.
	errors [panelSize][levels]float64
	// trapShare is the share of the claims that are traps.
	trapShare float64
}

// workloads are the three workloads, in the order they are reported.
var workloads = []workload{
	{
		name:  "heterogeneous",
		title: "heterogeneous panel (sessions err 6% to 25% of the time)",
		errors: [panelSize][levels]float64{
			{0.02, 0.06, 0.30}, // 6%
			{0.03, 0.09, 0.35}, // 8%
			{0.04, 0.12, 0.40}, // 10%
			{0.08, 0.20, 0.42}, // 15%
			{0.16, 0.36, 0.46}, // 25%
		},
	},
	{
		name:   "easy",
		title:  "easy panel (every session errs 2% of the time)",
		errors: [panelSize][levels]float64{{0.01, 0.02, 0.08}, {0.01, 0.02, 0.08}, {0.01, 0.02, 0.08}, {0.01, 0.02, 0.08}, {0.01, 0.02, 0.08}},
	},
	{
		name:      "traps",
		title:     "correlated traps (the heterogeneous panel; 10% of the claims are traps)",
		errors:    [panelSize][levels]float64{{0.02, 0.06, 0.30}, {0.03, 0.09, 0.35}, {0.04, 0.12, 0.40}, {0.08, 0.20, 0.42}, {0.16, 0.36, 0.46}},
		trapShare: 0.10,
	},
}

// errorRate returns session s's chance of erring on a claim of the
// workload, over every kind of claim.
func (w *workload) errorRate(s int) float64 {
	var e float64
	for d := range levels {
		e += shares[d] * w.errors[s-1][d]
	}
	trap := (1-lureChance)*w.errors[s-1][medium] + lureChance*lureError
	return (1-w.trapShare)*e + w.trapShare*trap
}

// Purposes of the uniform draws: each is its own stream.
const (
	streamDifficulty uint64 = iota + 1
	streamTruth
	streamError
	streamConfidence
	streamLatency
	streamTrap
	streamLure
	streamOutcome // the calls whose outcome the host reports
	streamOrder   // the order of a real-data workload's rows
	streamSeller  // the seller of a real-data claim
	streamPanel   // the models of a world's panel
	streamFloor   // the outcomes of a perfectly calibrated tier
)

// claim is one claim of a workload.
type claim struct {
	level difficulty
	trap  bool // a trap (trap workload only)
	lured bool // a trap that misleads the panel
	truth router.Verdict
}

// claims returns n claims of w, drawn from seed: claims first..first+n-1
// of the seed's sequence.
func (w *workload) claims(seed uint64, first, n int) []claim {
	cs := make([]claim, n)
	for j := range cs {
		i := uint64(first + j)
		c := &cs[j]
		u := uniform(seed, streamDifficulty, i)
		c.level = hard
		if u < shares[easy] {
			c.level = easy
		} else if u < shares[easy]+shares[medium] {
			c.level = medium
		}
		c.truth = router.VerdictValid
		if uniform(seed, streamTruth, i) < 0.5 {
			c.truth = router.VerdictInvalid
		}
		if uniform(seed, streamTrap, i) < w.trapShare {
			c.trap, c.level = true, medium
			c.lured = uniform(seed, streamLure, i) < lureChance
		}
	}
	return cs
}

// answer is what one worker says of one claim.
type answer struct {
	verdict    router.Verdict
	confidence float64
	latency    float64         // orders the replicas of a step: the smallest answers first
	output     json.RawMessage // a delegation's output
	failed     bool            // the run fails: its model gave no answer
}

// judge returns the answer of session s to claim c (number i). The draws
// depend on the seed, the claim and the session only: a session says the
// same of a claim whichever tier asks, so that every tier, before and
// after, sees the same votes. s is one of the panel's sessions, 1 to
// panelSize.
func (w *workload) judge(seed uint64, i int, c claim, s router.SessionID) answer {
	keys := func(stream uint64) float64 {
		return uniform(seed, stream, uint64(i), uint64(s))
	}
	a := answer{verdict: c.truth, latency: keys(streamLatency)}
	e := w.errors[s-1][c.level]
	if c.lured {
		e = lureError
	}
	if keys(streamError) < e {
		a.verdict = flip(c.truth)
	}
	r := reportedConfidence[c.level]
	a.confidence = r[0] + (r[1]-r[0])*keys(streamConfidence)
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

// simulated is the source of a simulated workload: its claims, drawn
// from seed, by number.
type simulated struct {
	seed   uint64
	w      *workload
	claims []claim
}

func (s simulated) truth(i int) router.Verdict { return s.claims[i].truth }

func (s simulated) answer(i int, id router.SessionID) answer {
	return s.w.judge(s.seed, i, s.claims[i], id)
}
