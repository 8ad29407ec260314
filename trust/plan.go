package trust

import "github.com/vouchkit/vouch/router"

// rung is one router call of a one-call tier.
type rung struct {
	tier     router.Tier
	replicas int
	policy   router.DisagreementPolicy
}

// plan returns the router call of a one-call tier (fast, safe, oracle):
// the table of the package documentation, as data. Adaptive makes its own
// calls (see Service.adaptive).
func plan(p Policy) rung {
	switch p {
	case PolicySafe:
		return rung{router.TierSafe, 3, router.DisagreeBestEffort}
	case PolicyOracle:
		return rung{router.TierOracle, 5, router.DisagreeFailHard}
	}
	return rung{router.TierFast, 1, router.DisagreeBestEffort}
}

// adaptiveTier is the router tier of adaptive's run i (counting from 0):
// the tier of the one-call tier whose replica count first covers it, so
// fast for the first run, safe for the second and third, oracle for the
// fourth and fifth.
func adaptiveTier(i int) router.Tier {
	switch {
	case i == 0:
		return router.TierFast
	case i < 3:
		return router.TierSafe
	}
	return router.TierOracle
}

// stronger returns the tier to retry with after an indecisive answer.
func stronger(p Policy) Policy {
	if p == PolicyFast {
		return PolicySafe
	}
	return PolicyOracle
}
