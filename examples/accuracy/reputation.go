package main

import (
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// reputationAvailable reports whether this build's engine and service can
// learn session reliability; reputationMissing says what is missing when
// they cannot.
const (
	reputationAvailable = false
	reputationMissing   = "router.Engine and trust.Service have no reputation option yet: only reputation off (today's behaviour) is measured"
)

// withReputation adds to the engine's and the service's options those of
// variant rep, and sets p's decider to the engine's aggregator.
func withReputation(p *panel, rep variant, engine []router.EngineOption, svc []trust.Option) ([]router.EngineOption, []trust.Option, error) {
	return engine, svc, nil
}
