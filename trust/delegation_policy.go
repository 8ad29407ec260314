package trust

import (
	"fmt"
	"slices"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
)

// DefaultPluralityFloor is the confidence an adaptive delegation must
// state, above it, to answer VALID (see [WithPluralityFloor]). A
// confidence above one half says that the answer is more likely right
// than wrong: with reputation on and outcomes reported it is the
// calibrated rate at which such answers turned out right; before any
// outcome, consensus.PluralityPosteriorAt of the groups of equal answers
// at the scope's learned coincidence and the mean reliability of the
// runs (pluralityReliability); with
// reputation off, consensus.Posterior of the runs that back the answer
// and of those that do not, which exceeds one half exactly when the
// answer holds a strict majority of the answers.
const DefaultPluralityFloor = 0.5

// WithPluralityFloor sets the floor of the status rule of adaptive
// delegations. Once adaptive stops (its stop settles the call, every run
// it allows is spent, or no session is left), a delegation that is not
// judged answers its winner VALID when at least two runs back it and the
// confidence it states is above f, and RETRY otherwise, with the winner
// as a best-effort result, its confidence and retry_instructions whose
// reason names both figures; one answer alone is VALID only when the
// escalation threshold settles it. A VALID short of the stop's threshold
// carries consensus.low_confidence in the receipt's consensus snapshot.
//
// With reputation on, the winner is the answer most runs gave (weights
// break a tie) and its confidence, unless the weighted tally's
// calibrated confidence reaches DefaultWeightedStopThreshold, the
// calibration map of its tier read at consensus.Posterior of those
// counts: with no outcome, consensus.PluralityPosteriorAt of the groups
// of equal answers at the chance, learned in the scope, that two wrong
// answers coincide (reputation.Book.Coincidence) and the runs' mean
// reliability (Evidence.Plurality). With reputation off the rule is the
// strict majority of at least two answers, as before.
//
// f must lie in [DefaultPluralityFloor, 1): a floor below one half would
// call VALID an answer more likely wrong than right, and no confidence is
// above 1. A host that acts only on surer answers raises it (0.9, say);
// the stated confidence lets a caller apply its own bar as well. The
// default is DefaultPluralityFloor. Validation, arbitration, judged
// delegations and the other tiers keep their rules.
func WithPluralityFloor(f float64) Option {
	return func(s *Service) error {
		if !(f >= DefaultPluralityFloor && f < 1) {
			return fmt.Errorf("trust: plurality floor must be in [%v, 1), got %v", DefaultPluralityFloor, f)
		}
		s.floor = f
		return nil
	}
}

// decides reports whether the tier accepts the winner of out, the tally
// of a finished call stating confidence: as accepts does, but for an
// adaptive delegation (byPlurality), which the rule of WithPluralityFloor
// decides. The tally is taken once adaptive has stopped, so out then
// holds every run the call made:
//
//	one answer  VALID when the stop settles it alone (an escalation
//	            threshold, consensus.Stop's Lone); RETRY else
//	otherwise   VALID when at least two runs back the winner and
//	            confidence is above the floor; RETRY else
//
// With reputation off the confidence is consensus.Posterior, above one
// half exactly when the winner holds a strict majority of the answers, so
// that the rule is then the strict majority of at least two that accepts
// states. With reputation on it is the calibrated confidence of the
// plurality (recount): a plurality short of a majority is VALID once the
// outcomes reported show such answers right more often than not, and a
// majority or a settled winner that they show wrong more often than not
// is RETRY.
func (s *Service) decides(req *Request, out consensus.Outcome, cal *reputation.Calibration, confidence float64) bool {
	if !byPlurality(req) {
		return s.accepts(req, out, cal)
	}
	if out.Replicas == 0 || out.Winner < 0 || out.Agreeing == 0 {
		return false
	}
	if out.Agreeing == 1 {
		return s.stop(req, cal).Settled(out)
	}
	return confidence > s.pluralityFloor()
}

// byPlurality reports whether req is decided by the plurality rule
// (WithPluralityFloor): an adaptive delegation that is not judged.
func byPlurality(req *Request) bool {
	return req.Mode == ModeDelegation && req.Policy == PolicyAdaptive && !req.Delegation.judged()
}

// recount returns the tally of an adaptive delegation weighted by
// reputation counted again by runs (consensus.Majority), and true, unless
// the weighted tally settles the call on its confidence: its calibrated
// conservative number (as cal maps it; consensus.Conservative before
// any outcome) reaches DefaultWeightedStopThreshold. Otherwise out is
// returned unchanged, with false.
//
// Weights learned from agreement rank the sessions and let adaptive stop
// early, but on real panels they can let one session outweigh several
// that agree (a session run only on the problems the others split on
// learns a low reliability), and their confidence then says little. Once
// the weights do not settle the call, the panel's best answer is the one
// most of its runs gave, stated with the calibrated Posterior of its
// counts (an open answer's map centred on consensus.PluralityPosteriorAt
// of its groups at coincide and reliability); a tie for the most runs
// keeps the weighted winner.
func recount(req *Request, out consensus.Outcome, runs []router.Run, key func(any) (string, error), cal *reputation.Calibration, coincide, reliability float64) (consensus.Outcome, bool, error) {
	if !byPlurality(req) || out.Strategy != consensus.StrategyWeighted || out.Winner < 0 {
		return out, false, nil
	}
	if cal == nil {
		cal = &reputation.Calibration{}
	}
	if c := consensus.Conservative(out); cal.Read(c, c) >= DefaultWeightedStopThreshold {
		return out, false, nil
	}
	m, err := count(consensus.Majority{}, req, runs, key)
	if err != nil || m.Winner < 0 || m.Agreeing < out.Agreeing {
		return out, false, err
	}
	if m.Agreeing == out.Agreeing { // a tie for the most runs: the weighted winner
		m.Winner, m.Answer, m.Label = out.Winner, out.Answer, out.Label
	}
	if groups, err := pluralityGroups(m, key); err != nil {
		return out, false, err
	} else if len(groups) > 1 || len(groups) == 1 && groups[0] > 1 {
		m.Confidence = consensus.PluralityPosteriorAt(groups, 0, coincide, reliability)
	}
	return m, true, nil
}

// pluralityGroups returns the sizes of the groups of equal answers
// among out's cast votes under key (nil: consensus.DefaultKey), the
// winner's group first; nil when out has no winner among them.
func pluralityGroups(out consensus.Outcome, key func(any) (string, error)) ([]int, error) {
	if key == nil {
		key = consensus.DefaultKey
	}
	var names []string
	var groups []int
	winner := -1
	for i, v := range out.Votes {
		if v.Answer == nil || v.Label == consensus.LabelCancelled || v.Label.Failed() {
			continue
		}
		k, err := key(v.Answer)
		if err != nil {
			return nil, err
		}
		j := slices.Index(names, k)
		if j < 0 {
			names, groups, j = append(names, k), append(groups, 0), len(names)
		}
		groups[j]++
		if i == out.Winner {
			winner = j
		}
	}
	if winner < 0 {
		return nil, nil
	}
	groups[0], groups[winner] = groups[winner], groups[0]
	return groups, nil
}

// next is adaptive's count of further runs for req after out: the stop's
// (consensus.Stop.Next), except that a call runs once more while runs
// are left, though the stop would settle it, when its answer would not
// stand: an adaptive delegation whose winner holds no strict majority of
// the answers (the chance that the runs left turn a tie of two and two
// is small when the next session weighs little, yet one more run breaks
// the tie: the plurality rule states such a winner's confidence, which
// is then at most one half, and answers RETRY), and any other call whose
// tally the stop settles on the next session's weight but the tally's
// acceptance, which weighs no next session, refuses (a weighted tie whose
// calibrated confidence is one half or below).
func next(req *Request, st consensus.Stop, out consensus.Outcome) int {
	k := st.Next(out)
	max := st.Max
	if max == 0 {
		max = consensus.DefaultMaxRuns
	}
	if k == 0 && out.Replicas < max && out.Winner >= 0 {
		if byPlurality(req) {
			if out.Agreeing <= out.Against {
				return 1
			}
			return 0
		}
		// The tally accepts on the stop without the next session's weight.
		accept := st
		accept.Weight = 0
		if !accept.Accept(out) {
			return 1
		}
	}
	return k
}

// pluralityFloor is the floor of the plurality rule: WithPluralityFloor's,
// or DefaultPluralityFloor.
func (s *Service) pluralityFloor() float64 {
	if s.floor == 0 {
		return DefaultPluralityFloor
	}
	return s.floor
}

// coincidence returns the chance that two wrong answers coincide in the
// call's scope (reputation.Book.Coincidence), as c read it for a
// delegation of an open answer (openAnswer); consensus.DefaultCoincidence
// otherwise, and when c is nil (no reputation, or the store failed).
func (c *scopeReading) coincidence() float64 {
	if c == nil || !c.open {
		return consensus.DefaultCoincidence
	}
	return c.coincide
}

// openAnswer reports whether req delegates an open answer whose groups
// of equal answers state its confidence (consensus.PluralityPosteriorAt): a
// delegation that declares no numeric answer and is not judged.
func openAnswer(req *Request) bool {
	return req.Mode == ModeDelegation && !req.numeric() && !req.Delegation.judged()
}

// pluralityReliability is the reliability consensus.PluralityPosteriorAt
// states an open answer at: the mean of the reliabilities of the runs
// that answered, as each run records it (router.Run.Reliability), a run
// that records none read at snap's prior (consensus.DefaultReliability
// when snap names none). Before any outcome every session reads the
// prior's mean, 0.8; outcomes move each to its record.
func pluralityReliability(runs []router.Run, snap *router.ReputationSnapshot) float64 {
	prior := consensus.DefaultReliability
	if snap != nil && snap.Prior > 0 {
		prior = snap.Prior
	}
	sum, n := 0.0, 0
	for _, r := range runs {
		if r.Label != router.LabelOK {
			continue
		}
		rel := prior
		if r.Reliability != nil {
			rel = *r.Reliability
		}
		sum += rel
		n++
	}
	if n == 0 {
		return prior
	}
	return sum / float64(n)
}
