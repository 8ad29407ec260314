package trust

import (
	"fmt"

	"github.com/vouchkit/vouch/trust/internal/decide"
)

// DefaultPluralityFloor is the confidence an adaptive delegation must
// state, above it, to answer VALID (see [WithPluralityFloor]). A
// confidence above one half says that the answer is more likely right
// than wrong: with reputation on and outcomes reported it is the
// calibrated rate at which such answers turned out right; before any
// outcome, consensus.PluralityPosteriorAt of the groups of equal answers
// at the scope's learned coincidence and the mean reliability of the
// runs (Evidence.Plurality records both); with reputation off,
// consensus.Posterior of the runs that back the answer
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
// counts (below the map's lowest point, the plurality's posterior, at
// most that point's rate: reputation.Calibration.HeldBasis): with no
// outcome, consensus.PluralityPosteriorAt of the groups
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

// rules returns the rules req's calls are decided by (package decide), with
// the service's settings: reputation on or off, the escalation
// threshold, DefaultWeightedStopThreshold, DefaultFlipBound and the
// plurality floor.
func (s *Service) rules(req *Request) decide.Rules {
	return decide.Rules{
		Tier:       decide.Tier(req.Policy),
		Delegation: req.Mode == ModeDelegation,
		Numeric:    req.numeric(),
		Tolerance:  tolerance(req),
		Judged:     req.Delegation.judged(),
		Calibrated: s.keep != nil,
		Lone:       s.threshold,
		Threshold:  DefaultWeightedStopThreshold,
		Flip:       DefaultFlipBound,
		Floor:      s.pluralityFloor(),
	}
}

// pluralityFloor is the floor of the plurality rule: WithPluralityFloor's,
// or DefaultPluralityFloor.
func (s *Service) pluralityFloor() float64 {
	if s.floor == 0 {
		return DefaultPluralityFloor
	}
	return s.floor
}
