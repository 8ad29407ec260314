package consensus

import (
	"cmp"
	"fmt"
	"math"
	"slices"
)

// Bounds of the reliability a vote's weight is computed from.
const (
	// DefaultReliability is the reliability of a session a Reliabilities
	// does not name when its Prior is 0: 0.8, the mean of the prior a
	// session starts from in package reputation.
	DefaultReliability = 0.8
	// MaxReliability caps the reliability behind a weight, so that no
	// vote weighs more than log(999) ≈ 6.9 and no panel is ever certain.
	MaxReliability = 0.999
)

// Reliabilities is what a weighted aggregation knows of the voters: the
// probability that each session's vote is right, and how far the voters'
// errors go together. The zero Reliabilities gives every session
// DefaultReliability and takes the votes as independent.
type Reliabilities struct {
	// Sessions maps a session to the probability that its vote is right.
	Sessions map[int64]float64
	// Prior is the reliability of a session Sessions does not hold; 0
	// means DefaultReliability.
	Prior float64
	// Correlation is ρ in [0, 1), how far the voters' errors go together:
	// 0 for independent voters. See [Tempering].
	Correlation float64
	// Confidence maps a session to what its reported confidence is
	// worth (see [Reliabilities.Evidence]); a session it does not hold
	// weighs its reliability alone.
	Confidence map[int64]ConfidenceSlope
}

// ConfidenceSpan bounds how far a vote's reported confidence moves its
// weight from its session's record: by at most 30% of it either way
// ([Reliabilities.Evidence]), so that two agreeing votes of a session
// always outweigh one of the same session, and a count of equal sessions
// is never turned by confidence alone.
const ConfidenceSpan = 0.3

// A ConfidenceSlope is what a session's reported confidence says of its
// vote: Slope β, the change in the vote's log-odds of being right per
// unit of the log-odds of the confidence it reported, away from Center,
// the mean log-odds of the confidences the session reports. A slope of 0
// means that its confidence says nothing, and its votes weigh its record
// alone.
type ConfidenceSlope struct {
	Slope  float64 `json:"slope"`
	Center float64 `json:"center"`
}

// Logit returns the log-odds log(c/(1-c)) of a reported confidence, c
// clamped to [1-MaxReliability, MaxReliability].
func Logit(c float64) float64 {
	c = min(max(c, 1-MaxReliability), MaxReliability)
	return math.Log(c / (1 - c))
}

// Evidence returns the weight of v, a vote cast: w = Weight of its
// session's reliability and, when v reported a confidence c > 0 and its
// session has a slope in Confidence,
//
//	w + β·(Logit(c) − Center)
//
// clamped to [(1−ConfidenceSpan)·w, (1+ConfidenceSpan)·w] and to at most
// Weight(MaxReliability). A session Confidence does not hold weighs its
// record alone, as does a vote that reported no confidence.
func (r Reliabilities) Evidence(v Vote) float64 {
	w := Weight(r.Of(v.Session))
	cs, ok := r.Confidence[v.Session]
	if !ok || cs.Slope == 0 || !(v.Confidence > 0) {
		return w
	}
	e := w + cs.Slope*(Logit(v.Confidence)-cs.Center)
	return min(max(e, (1-ConfidenceSpan)*w), (1+ConfidenceSpan)*w, Weight(MaxReliability))
}

// most returns the largest Evidence a vote of session can carry: the
// Weight of its reliability, raised by ConfidenceSpan (to at most
// Weight(MaxReliability)) when Confidence gives it a slope.
func (r Reliabilities) most(session int64) float64 {
	w := Weight(r.Of(session))
	if cs, ok := r.Confidence[session]; !ok || cs.Slope == 0 {
		return w
	}
	return min((1+ConfidenceSpan)*w, Weight(MaxReliability))
}

// Of returns the reliability of session: Sessions[session], or Prior.
func (r Reliabilities) Of(session int64) float64 {
	if p, ok := r.Sessions[session]; ok {
		return p
	}
	if r.Prior == 0 {
		return DefaultReliability
	}
	return r.Prior
}

// check reports a reliability or correlation out of range.
func (r Reliabilities) check() error {
	if !(r.Prior >= 0 && r.Prior <= 1) {
		return fmt.Errorf("%w: prior reliability %v is outside [0, 1]", ErrInvalid, r.Prior)
	}
	if !(r.Correlation >= 0 && r.Correlation < 1) {
		return fmt.Errorf("%w: correlation %v is outside [0, 1)", ErrInvalid, r.Correlation)
	}
	for s, p := range r.Sessions {
		if !(p >= 0 && p <= 1) {
			return fmt.Errorf("%w: reliability %v of session %d is outside [0, 1]", ErrInvalid, p, s)
		}
	}
	for s, cs := range r.Confidence {
		if !(cs.Slope >= 0 && cs.Slope <= math.MaxFloat64) || math.IsNaN(cs.Center) || math.IsInf(cs.Center, 0) {
			return fmt.Errorf("%w: confidence slope %+v of session %d is not a finite slope of at least 0 and a finite centre", ErrInvalid, cs, s)
		}
	}
	return nil
}

// Weight returns the weight of a vote cast by a session whose vote is
// right with probability p: its log-odds log(p/(1-p)), the weight under
// which a weighted majority is the Bayes rule for independent voters
// choosing between two answers. p is first clamped to [1/2,
// MaxReliability]: a voter no better than a coin weighs 0, never less.
func Weight(p float64) float64 {
	p = min(max(p, 0.5), MaxReliability)
	return math.Log(p / (1 - p))
}

// Tempering returns the factor 1 / (1 + (n-1)ρ) by which the summed
// weights of n votes whose errors correlate by ρ are scaled: n such votes
// carry the evidence of 1 + (n-1)ρ independent ones at most (the design
// effect of a cluster of n). One vote, or ρ = 0, gives 1. ρ is clamped to
// [0, 1] and NaN reads as 1 (the n votes count as one), so that the factor
// always lies in [1/n, 1].
func Tempering(n int, rho float64) float64 {
	if n <= 1 {
		return 1
	}
	rho = min(max(rho, 0), 1)
	if math.IsNaN(rho) {
		rho = 1
	}
	return 1 / (1 + float64(n-1)*rho)
}

// Credence returns the probability that the answer of group i is right,
// given scores, the summed weights of the votes of each group of agreeing
// votes, scaled by tempering:
//
//	Credence = exp(t·S_i) / (Σ_g exp(t·S_g) + max(0, 2-G))
//
// where G = len(scores) and t = tempering. This is Bayes' rule with a
// uniform prior over two possible answers (one not voted for counts
// exp(0)): a lone group of score S gets the logistic σ(t·S), so one vote
// of reliability p scores p; two groups get σ(t·(S_i - S_j)), so a split
// between equally reliable voters scores 1/2. It returns 0 when i is out
// of range. A score that is infinite once tempered is certain: such
// groups share 1, and the others get 0; two groups or more whose tempered
// scores are all −Inf share 1 alike. It returns 0 for every group when a
// tempered score is NaN (a NaN score or tempering, or an infinite score
// tempered by 0): a score that says nothing makes no answer likely.
func Credence(scores []float64, i int, tempering float64) float64 {
	if i < 0 || i >= len(scores) {
		return 0
	}
	top := math.Inf(-1)
	if len(scores) < 2 {
		top = 0 // the unvoted answer's exponent
	}
	certain := 0
	for _, s := range scores {
		if math.IsNaN(tempering * s) {
			return 0
		}
		top = max(top, tempering*s)
		if math.IsInf(tempering*s, 1) {
			certain++
		}
	}
	if math.IsInf(top, -1) {
		return 1 / float64(len(scores)) // every group at −Inf
	}
	if certain > 0 {
		if math.IsInf(tempering*scores[i], 1) {
			return 1 / float64(certain)
		}
		return 0
	}
	var sum float64
	for _, s := range scores {
		sum += math.Exp(tempering*s - top)
	}
	if g := len(scores); g < 2 {
		sum += float64(2-g) * math.Exp(-top)
	}
	return math.Exp(tempering*scores[i]-top) / sum
}

// Weighted is the Aggregator of StrategyWeighted: each cast vote counts
// with its Evidence (the Weight of its session's reliability, moved by
// its reported confidence where its session's confidence says
// anything), and the group of agreeing votes with the largest summed
// weight wins (on a tie, as for Majority:
// the more cautious label, then the earlier first vote). Under
// FailuresNegative the failed votes form one rival group, weighted the
// same way, that wins ties, as under Majority.
//
// Its outcome counts Agreeing, Against and Agreement as Majority does; its
// Weights hold each vote's weight (0 for a vote not cast) and its
// Confidence is the Credence of the winner among every group (the failed
// group included under FailuresNegative), tempered by
// Tempering(n, Correlation) where n counts the votes in those groups.
// Anyone holding the votes, their weights and the correlation recomputes
// winner, agreement and confidence.
type Weighted struct {
	// Reliabilities gives each session's reliability and the
	// correlation.
	Reliabilities Reliabilities
	// Launched, when set, names the session of each replica by index, so
	// that Decided weighs a replica still running as the most a vote of
	// its session can weigh; a replica it does not name weighs
	// Weight(MaxReliability).
	Launched []int64
}

// Aggregate implements Aggregator.
func (w Weighted) Aggregate(votes []Vote, p Policy) (Outcome, error) {
	if err := w.Reliabilities.check(); err != nil {
		return Outcome{}, err
	}
	var buf [8]group
	member := make([]int, len(votes))
	t, err := count(buf[:0], votes, p, false, member)
	if err != nil {
		return Outcome{}, err
	}
	weights := make([]float64, len(votes))
	scores, failed := w.score(t, votes, p, member, weights)
	negative := p.Failures == FailuresNegative
	b := leaderBy(t.groups, scores)
	if b >= 0 && negative && t.failed > 0 && failed >= scores[b] {
		b = -1 // the failures win
	}
	out := outcomeOf(StrategyWeighted, votes, t, p, b)
	out.Weights, out.Correlation = weights, w.Reliabilities.Correlation
	if b >= 0 {
		all, voters := scores, t.cast
		if negative && t.failed > 0 {
			all, voters = append(slices.Clone(scores), failed), voters+t.failed
		}
		out.Score = scores[b]
		out.Confidence = Credence(all, b, Tempering(voters, w.Reliabilities.Correlation))
	}
	return finish(out, p, t)
}

// score fills weights with each cast (or, under FailuresNegative, failed)
// vote's weight, given each vote's group as count recorded it in member,
// and returns each group's summed weight and the failed group's.
func (w Weighted) score(t tally, votes []Vote, p Policy, member []int, weights []float64) (scores []float64, failed float64) {
	for i, v := range votes {
		switch g := member[i]; {
		case g >= 0:
			weights[i] = w.Reliabilities.Evidence(v)
		case v.Label.Failed() && p.Failures == FailuresNegative:
			weights[i] = Weight(w.Reliabilities.Of(sessionOf(v, i, w.Launched)))
		}
	}
	// Each group's weights are summed smallest first, so that its score
	// depends on its weights alone, not on the order of its votes: groups
	// of equal weights tie exactly, and the tie rule decides, not rounding.
	order := make([]int, len(votes))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(weights[a], weights[b]) })
	scores = make([]float64, len(t.groups))
	for _, i := range order {
		switch g := member[i]; {
		case g >= 0:
			scores[g] += weights[i]
		case votes[i].Label.Failed() && p.Failures == FailuresNegative:
			failed += weights[i]
		}
	}
	return scores, failed
}

// leaderBy returns the index of the group with the largest score (on a
// tie, the more cautious label, then the earlier first vote), -1 if there
// is none.
func leaderBy(groups []group, scores []float64) int {
	best := -1
	for i, g := range groups {
		if best < 0 {
			best = i
			continue
		}
		h := groups[best]
		switch {
		case scores[i] != scores[best]:
			if scores[i] > scores[best] {
				best = i
			}
		case caution(g.label) != caution(h.label):
			if caution(g.label) < caution(h.label) {
				best = i
			}
		case g.first < h.first:
			best = i
		}
	}
	return best
}

// Decided implements Aggregator: outside FailHard, the leading group must
// stay strictly ahead even if every replica still running joins the
// strongest rival (a new answer included); under FailHard two groups
// decide, as for Majority. A running replica weighs as much as a vote of
// its session in Launched can (its Evidence at the most confident).
func (w Weighted) Decided(votes []Vote, p Policy) bool {
	if w.Reliabilities.check() != nil {
		return true
	}
	var buf [8]group
	member := make([]int, len(votes))
	t, err := count(buf[:0], votes, p, true, member)
	if err != nil || t.pending == 0 {
		return true
	}
	if p.Disagreement == FailHard {
		return t.disagrees()
	}
	negative := p.Failures == FailuresNegative
	weights := make([]float64, len(votes))
	scores, failed := w.score(t, votes, p, member, weights)
	var pending float64
	for i, v := range votes {
		if v.Label != "" {
			continue
		}
		if i < len(w.Launched) {
			pending += w.Reliabilities.most(w.Launched[i])
		} else {
			pending += Weight(MaxReliability)
		}
	}
	b := leaderBy(t.groups, scores)
	lead := 0.0
	if b >= 0 {
		lead = scores[b]
	}
	if negative && failed >= lead+pending && t.failed > 0 {
		return true
	}
	if b < 0 || pending >= lead {
		return false
	}
	for i, s := range scores {
		if i != b && s+pending >= lead {
			return false
		}
	}
	return !negative || failed+pending < lead
}

// Beliefs returns, for each vote, the probability that its answer is the
// right one given every cast vote, under r with the votes taken as
// independent: the Credence of its group with tempering 1. A vote not
// cast gets 0. It is the expectation step of learning reliabilities from
// agreement (Dawid and Skene's, with one reliability per voter): a voter
// is right with the probability that its group's answer is. It also
// returns each vote's group of agreeing votes, numbered in order of first
// vote (-1 for a vote not cast).
func Beliefs(votes []Vote, p Policy, r Reliabilities) (beliefs []float64, groups []int, err error) {
	if err := r.check(); err != nil {
		return nil, nil, err
	}
	var buf [8]group
	member := make([]int, len(votes))
	t, err := count(buf[:0], votes, Policy{Key: p.Key}, false, member)
	if err != nil {
		return nil, nil, err
	}
	weights := make([]float64, len(votes))
	scores, _ := Weighted{Reliabilities: r}.score(t, votes, Policy{Key: p.Key}, member, weights)
	beliefs = weights[:0] // each weight is read before its slot is written
	for _, g := range member {
		b := 0.0
		if g >= 0 {
			b = Credence(scores, g, 1)
		}
		beliefs = append(beliefs, b)
	}
	return beliefs, member, nil
}

// Conservative returns the confidence of out that is never above what an
// unweighted count of the same votes would state for its winner: under
// StrategyWeighted the smaller of out.Confidence and
// Posterior(Agreeing, Against), else out.Confidence. It is the number a
// call states while its calibration map holds no outcome, and where the
// map's prior is centred. It returns 0 when out has no winner.
func Conservative(out Outcome) float64 {
	if out.Winner < 0 || out.Agreeing == 0 {
		return 0
	}
	if out.Strategy != StrategyWeighted {
		return out.Confidence
	}
	return min(out.Confidence, Posterior(out.Agreeing, out.Against))
}

// sessionOf returns the session of v, the vote of replica i: its own, or,
// for a replica a Runner abandoned (recorded without a session), the one
// launched names, so that its failure weighs as its session's and not as
// an unknown session's prior.
func sessionOf(v Vote, i int, launched []int64) int64 {
	if v.Session == 0 && i < len(launched) {
		return launched[i]
	}
	return v.Session
}
