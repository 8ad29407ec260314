package main

import (
	"fmt"
	"math"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// bins is the number of equal-width confidence bins of the calibration
// figures (ECE and the reliability charts).
const bins = 10

// bin is the answered calls whose stated confidence fell in one bin.
type bin struct {
	calls, correct int
	confidence     float64 // the sum of their stated confidence
}

// stated returns the bin's mean stated confidence.
func (b bin) stated() float64 { return ratio2(b.confidence, b.calls) }

// observed returns the share of the bin's calls that were right.
func (b bin) observed() float64 { return ratio(b.correct, b.calls) }

// stats summarizes a set of calls.
type stats struct {
	calls, correct, answered int
	runs, maxRuns            int
	perSession               [panelSize]int
	bins                     [bins]bin
	brier                    float64 // the sum of (confidence - correct)² over answered calls
}

// summarize returns the stats of the calls whose number keep accepts (nil:
// every call).
func summarize(calls []call, keep func(i int) bool) stats {
	var s stats
	for i, c := range calls {
		if keep != nil && !keep(i) {
			continue
		}
		s.calls++
		s.runs += c.launched + c.exam // a report's exam is paid for by the calls
		s.maxRuns = max(s.maxRuns, c.launched)
		for j, n := range c.runs {
			s.perSession[j] += n
		}
		if c.correct {
			s.correct++
		}
		if !c.answered {
			continue
		}
		s.answered++
		b := &s.bins[binOf(c.confidence)]
		b.calls++
		b.confidence += c.confidence
		right := 0.0
		if c.correct {
			b.correct++
			right = 1
		}
		s.brier += (c.confidence - right) * (c.confidence - right)
	}
	return s
}

// add adds o's calls to s.
func (s *stats) add(o stats) {
	s.calls += o.calls
	s.correct += o.correct
	s.answered += o.answered
	s.runs += o.runs
	s.maxRuns = max(s.maxRuns, o.maxRuns)
	for j := range s.perSession {
		s.perSession[j] += o.perSession[j]
	}
	for k := range s.bins {
		s.bins[k].calls += o.bins[k].calls
		s.bins[k].correct += o.bins[k].correct
		s.bins[k].confidence += o.bins[k].confidence
	}
	s.brier += o.brier
}

// binOf returns the bin of confidence c: [0, 0.1), ..., [0.9, 1].
func binOf(c float64) int { return min(max(int(c*bins), 0), bins-1) }

func (s stats) accuracy() float64        { return ratio(s.correct, s.calls) }
func (s stats) coverage() float64        { return ratio(s.answered, s.calls) }
func (s stats) runsPerCall() float64     { return ratio(s.runs, s.calls) }
func (s stats) meanBrier() float64       { return ratio2(s.brier, s.answered) }
func (s stats) share(j int) float64      { return ratio(s.perSession[j], s.runs) }
func (s stats) wilson() (lo, hi float64) { return wilson(s.correct, s.calls) }

// maxShare returns the largest share of the runs any one session ran.
func (s stats) maxShare() float64 {
	var m float64
	for j := range s.perSession {
		m = max(m, s.share(j))
	}
	return m
}

// ece returns the expected calibration error over the answered calls:
// Σ over bins of (calls in the bin / answered calls) × |mean stated
// confidence − observed accuracy|.
func (s stats) ece() float64 {
	var sum float64
	for _, b := range s.bins {
		sum += math.Abs(b.confidence - float64(b.correct))
	}
	return ratio2(sum, s.answered)
}

// meanStated returns the mean stated confidence of the answered calls.
func (s stats) meanStated() float64 {
	var sum float64
	for _, b := range s.bins {
		sum += b.confidence
	}
	return ratio2(sum, s.answered)
}

// answeredRight returns the share of the answered calls that were right.
func (s stats) answeredRight() float64 { return ratio(s.correct, s.answered) }

// increasing reports whether the observed accuracy rises (never falls)
// from bin to bin across the bins holding at least minCalls calls.
func (s stats) increasing(minCalls int) bool {
	last := -1.0
	for _, b := range s.bins {
		if b.calls < minCalls {
			continue
		}
		if b.observed() < last {
			return false
		}
		last = b.observed()
	}
	return true
}

// wilson returns the Wilson score interval at 95% of k successes in n
// trials.
func wilson(k, n int) (lo, hi float64) {
	if n == 0 {
		return 0, 1
	}
	const z = 1.959963984540054
	p, nf := float64(k)/float64(n), float64(n)
	d := 1 + z*z/nf
	centre := (p + z*z/(2*nf)) / d
	half := z * math.Sqrt(p*(1-p)/nf+z*z/(4*nf*nf)) / d
	return max(centre-half, 0), min(centre+half, 1)
}

func ratio(a, b int) float64 {
	if b == 0 {
		return 0
	}
	return float64(a) / float64(b)
}

func ratio2(a float64, b int) float64 {
	if b == 0 {
		return 0
	}
	return a / float64(b)
}

// majorityOfFive returns the reference of each claim of src from 0 to
// n-1: the plain majority of the five sessions' votes, computed from the
// same answers the tiers see, with its confidence consensus.Posterior of
// the tally. It always spends 5 runs, one on each session.
func majorityOfFive(src claims, n int) ([]call, error) {
	out := make([]call, n)
	for i := range out {
		votes := make([]consensus.Vote, panelSize)
		for s := range votes {
			a := src.answer(i, router.SessionID(s+1))
			votes[s] = consensus.Vote{Session: int64(s + 1), Label: consensus.Label(a.verdict)}
		}
		o, err := consensus.Majority{}.Aggregate(votes, consensus.Policy{})
		if err != nil {
			return nil, fmt.Errorf("the majority of 5 of claim %d: %w", i, err)
		}
		k := call{status: trust.Status(o.Label), correct: router.Verdict(o.Label) == src.truth(i), answered: true, confidence: o.Confidence, launched: panelSize}
		for s := range k.runs {
			k.runs[s] = 1
		}
		out[i] = k
	}
	return out, nil
}

// alone returns session s's answers to the claims of src from 0 to n-1,
// each as a call of one run stating the session's own confidence.
func alone(src claims, n int, s router.SessionID) []call {
	out := make([]call, n)
	for i := range out {
		a := src.answer(i, s)
		out[i] = call{status: trust.Status(a.verdict), correct: a.verdict == src.truth(i), answered: true, confidence: a.confidence, launched: 1}
		out[i].runs[s-1] = 1
	}
	return out
}

// phi returns the correlation of two series of events, x[i] and y[i]
// (the phi coefficient of their 2×2 table), over the shorter series; 0
// when either never or always happens.
func phi(x, y []bool) float64 {
	n := min(len(x), len(y))
	var nx, ny, nxy float64
	for i := range n {
		if x[i] {
			nx++
		}
		if y[i] {
			ny++
		}
		if x[i] && y[i] {
			nxy++
		}
	}
	den := nx * (float64(n) - nx) * ny * (float64(n) - ny)
	if !(den > 0) {
		return 0
	}
	return (float64(n)*nxy - nx*ny) / math.Sqrt(den)
}
