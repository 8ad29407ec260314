package consensus

import "math"

// Defaults of a [Stop].
const (
	// DefaultStopThreshold is the Posterior at which the leading answer
	// settles a sequential call: two agreeing votes (7/8) settle it, as do
	// 3 of 4 (13/16) and 4 of 5; one vote (3/4), 2 of 3 (11/16) and 3 of 5
	// (21/32) do not.
	DefaultStopThreshold = 0.8
	// DefaultMaxRuns bounds the runs of a sequential call: as many as the
	// largest consensus call, 5.
	DefaultMaxRuns = 5
)

// A Stop is the stopping rule of a sequential call, which launches runs in
// small batches and pools every vote they cast into one outcome (the
// trust service's adaptive tier). It is a rule in the manner of
// Adaptive-Consistency (Aggarwal et al., 2023): the call stops as soon as
// the Posterior of the leading answer reaches Threshold, and never
// launches more than Max runs.
//
//	Settled   a winner of two agreeing votes or more whose
//	          confidence reaches Threshold, or
//	          one answer alone, nothing against it, that reported a
//	          confidence of at least Lone (when Lone > 0), or
//	          (weighted, Flip > 0) two agreeing votes or more whose
//	          verdict the runs left turn with a chance below Flip
//	Next      0 once settled or Max runs are launched; otherwise the
//	          fewest further runs that could settle the call if they all
//	          backed the leader (1 to start when Lone > 0, else 2), or
//	          every run left when none could; a weighted outcome's votes
//	          against the leader count as one group, so where they split
//	          among several answers the runs planned can fall short, and
//	          Next, asked again, plans more
//	Accept    settled, or once no run is left: a strict majority of the
//	          votes, of at least two (never one answer alone), or
//	          (weighted) a winner of at least two votes whose
//	          confidence is above one half
//
// The confidence is Posterior(Agreeing, Against) for a majority outcome,
// and the outcome's Confidence for a weighted one (StrategyWeighted),
// where Next expects each further vote to weigh Weight. An outcome
// settles on its confidence only with two agreeing votes or more, so one
// answer settles only through Lone, whatever Threshold: one weighted
// vote's confidence is its session's reliability alone, and one
// unweighted vote's, Posterior(1, 0) = 3/4, would otherwise settle a
// Threshold of 3/4 or less.
//
// Failed replicas are no votes unless the outcome's policy made them
// negative evidence, and replicas cancelled before they answered are no
// votes at all: they count only against Max. A Stop's methods read only
// the outcome's counts (Replicas, Winner, Agreeing, Against) and the
// winner's Confidence, so a verdict is a function of every vote collected.
//
// The zero Stop uses the defaults and never settles on one answer.
type Stop struct {
	// Threshold is the Posterior that settles the call; 0 means
	// DefaultStopThreshold.
	Threshold float64
	// Lone is the confidence a single answer must report to settle the
	// call alone; 0 means that one answer never does.
	Lone float64
	// Max bounds the runs launched; 0 means DefaultMaxRuns, and a Max
	// above 100 is taken as 100, which bounds the work of Next (it weighs
	// each count of further runs against the runs left).
	Max int
	// Weight is the weight Next expects each further vote to carry when
	// the outcome is StrategyWeighted's (such as the Weight of the next
	// session to run); 0 means Weight(DefaultReliability). A positive
	// Weight also makes Next plan the first runs of a call, before any
	// outcome, as weighted votes.
	Weight float64
	// Calibrate, when set, is the calibration map of a weighted outcome:
	// the number compared with Threshold is then
	// Calibrate(out.Confidence, Conservative(out)) (and for Next, the
	// same of the outcome with further agreeing votes). nil compares
	// out.Confidence. It must be non-decreasing in both numbers.
	Calibrate func(confidence, conservative float64) float64
	// Flip, when positive, also settles a weighted outcome of at least
	// two agreeing votes once the chance that the runs left (up to Max)
	// turn its verdict is below Flip: each further vote weighs Weight,
	// backs the winner with probability p = 1/(1+exp(-Weight)) if the
	// winner is right (with the compared confidence c) and 1-p if it is
	// wrong, so that the chance is
	//
	//	c·P[Bin(m, 1-p) ≥ d] + (1-c)·P[Bin(m, p) ≥ d]
	//
	// for m runs left and d the fewest dissents that would give a rival
	// (every vote against the winner pooled as one) a summed weight at
	// least the winner's. A call whose verdict no run left can turn
	// settles at once. 0 never settles a call this way.
	Flip float64
}

// confidence is the quantity s compares with its threshold: under
// StrategyWeighted the outcome's own Confidence, calibrated when
// Calibrate is set; else Posterior(Agreeing, Against).
func (s Stop) confidence(out Outcome) float64 {
	if out.Strategy != StrategyWeighted {
		return Posterior(out.Agreeing, out.Against)
	}
	if s.Calibrate != nil {
		return s.Calibrate(out.Confidence, Conservative(out))
	}
	return out.Confidence
}

// weight is the weight a further vote is expected to carry.
func (s Stop) weight() float64 {
	if s.Weight == 0 {
		return Weight(DefaultReliability)
	}
	return s.Weight
}

// flip returns the chance that the runs left after k more votes backing
// out's winner turn its verdict, the winner being right with probability
// c (see Stop.Flip).
func (s Stop) flip(out Outcome, k int, c float64) float64 {
	m := s.max() - out.Replicas - k
	if m <= 0 {
		return 0
	}
	w := s.weight()
	var all float64
	for _, x := range out.Weights {
		all += x
	}
	lead, rival := out.Score+float64(k)*w, all-out.Score
	// d dissents of m turn it when rival + d·w >= lead + (m-d)·w.
	d := 0
	for d <= m && rival+float64(d)*w < lead+float64(m-d)*w {
		d++
	}
	if d > m {
		return 0
	}
	p := 1 / (1 + math.Exp(-w))
	return c*binomialTail(m, 1-p, d) + (1-c)*binomialTail(m, p, d)
}

// binomialTail returns P[Bin(n, q) ≥ d].
func binomialTail(n int, q float64, d int) float64 {
	var sum float64
	c := 1.0 // C(n, k)
	for k := 0; k <= n; k++ {
		if k >= d {
			sum += c * math.Pow(q, float64(k)) * math.Pow(1-q, float64(n-k))
		}
		c = c * float64(n-k) / float64(k+1)
	}
	return min(sum, 1)
}

// after returns the confidence out's winner would have if k more votes
// backed it.
func (s Stop) after(out Outcome, lead, against, k int) float64 {
	if lead+k < 2 {
		return 0 // one answer settles nothing but through Lone
	}
	if out.Strategy != StrategyWeighted && !(out.Replicas == 0 && s.Weight > 0) {
		return Posterior(lead+k, against)
	}
	w := s.weight()
	var rest float64
	for _, x := range out.Weights {
		rest += x
	}
	rest -= out.Score
	scores := []float64{out.Score + float64(k)*w}
	if rest > 0 || against > 0 {
		scores = append(scores, rest)
	}
	c := Credence(scores, 0, Tempering(lead+against+k, out.Correlation))
	if s.Calibrate != nil {
		c = s.Calibrate(c, min(c, Posterior(lead+k, against)))
	}
	return c
}

func (s Stop) threshold() float64 {
	if s.Threshold == 0 {
		return DefaultStopThreshold
	}
	return s.Threshold
}

// maxRuns is the most runs a Stop launches, whatever its Max.
const maxRuns = 100

func (s Stop) max() int {
	if s.Max == 0 {
		return DefaultMaxRuns
	}
	return min(s.Max, maxRuns)
}

// Settled reports whether out, the outcome of every run so far, settles
// the call.
func (s Stop) Settled(out Outcome) bool {
	if out.Replicas == 0 || out.Winner < 0 || out.Agreeing == 0 {
		return false
	}
	c := s.confidence(out)
	if c >= s.threshold() && out.Agreeing >= 2 {
		return true
	}
	if s.Flip > 0 && out.Strategy == StrategyWeighted && out.Agreeing >= 2 && s.flip(out, 0, c) < s.Flip {
		return true
	}
	return s.Lone > 0 && out.Agreeing == 1 && out.Against == 0 &&
		out.Winner < len(out.Votes) && out.Votes[out.Winner].Confidence >= s.Lone
}

// Next returns how many runs to launch after out, the outcome of every run
// so far (the zero Outcome before the first): 0 means stop.
func (s Stop) Next(out Outcome) int {
	left := s.max() - out.Replicas
	if left <= 0 || s.Settled(out) {
		return 0
	}
	lead, against := 0, 0
	if out.Replicas > 0 && out.Winner >= 0 {
		lead, against = out.Agreeing, out.Against
	}
	if lead == 0 && against == 0 && s.Lone > 0 {
		return 1
	}
	flips := s.Flip > 0 && (out.Strategy == StrategyWeighted || out.Replicas == 0 && s.Weight > 0)
	for k := 1; k < left; k++ {
		c := s.after(out, lead, against, k)
		if c >= s.threshold() || flips && lead+k >= 2 && s.flip(out, k, c) < s.Flip {
			return k
		}
	}
	return left
}

// Accept reports whether the call may report out's winner once it
// launches no more runs: when out is settled, or when the winner holds a
// strict majority of at least two votes, or, for a weighted outcome,
// when at least two votes back the winner and its confidence (calibrated
// when Calibrate is set) is above one half. Otherwise the call has no
// verdict (the trust service answers RETRY).
//
// The weighted case is the call that stops because the runs left could
// not turn its verdict: Next weighs a further run by Weight (the next
// session's, as the trust service sets it), while the outcome alone does
// not say what that weight was, so Accept does not ask the flip rule
// again. A tie of two votes and two whose fifth session weighs too
// little to turn it is reported, not refused, and not run once more for
// a verdict that run could not change.
func (s Stop) Accept(out Outcome) bool {
	if s.Settled(out) {
		return true
	}
	if out.Replicas == 0 || out.Winner < 0 || out.Agreeing < 2 {
		return false
	}
	return out.Agreeing > out.Against || out.Strategy == StrategyWeighted && s.confidence(out) > 0.5
}
