package trust

import "github.com/vouchkit/vouch/router"

// rung is one router call of a tier's plan.
type rung struct {
	tier     router.Tier
	replicas int
	policy   router.DisagreementPolicy
}

// ladder returns the plan of a tier: the router calls it may make, in
// order. Every tier but adaptive makes exactly one call; adaptive climbs to
// the next rung only when the current one is not decisive. This is the
// table of the package documentation, as data.
func ladder(p Policy) []rung {
	switch p {
	case PolicyFast:
		return []rung{{router.TierFast, 1, router.DisagreeBestEffort}}
	case PolicySafe:
		return []rung{{router.TierSafe, 3, router.DisagreeBestEffort}}
	case PolicyOracle:
		return []rung{{router.TierOracle, 5, router.DisagreeFailHard}}
	case PolicyAdaptive:
		return []rung{
			{router.TierFast, 1, router.DisagreeBestEffort},
			{router.TierSafe, 3, router.DisagreeBestEffort},
			{router.TierOracle, 5, router.DisagreeBestEffort},
		}
	}
	return nil
}

// stronger returns the tier to retry with after an indecisive answer.
func stronger(p Policy) Policy {
	switch p {
	case PolicyFast:
		return PolicySafe
	case PolicySafe, PolicyAdaptive:
		return PolicyOracle
	}
	return PolicyOracle
}
