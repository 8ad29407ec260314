// Package routerfault holds routers that fail on purpose, for the tests
// of trust and of the doors built on it.
package routerfault

import (
	"context"
	"errors"

	"github.com/vouchkit/vouch/router"
)

// ErrOracleDown is the error of OracleDown's oracle-tier validations.
var ErrOracleDown = errors.New("the oracle tier is down")

// OracleDown is an engine whose oracle-tier validations (at tier oracle,
// or on five replicas) fail with ErrOracleDown; every other call reaches
// the engine.
type OracleDown struct{ *router.Engine }

// ValidateV3 fails a validation at tier oracle or on five replicas and
// passes any other to the engine.
func (o OracleDown) ValidateV3(ctx context.Context, req *router.ValidateV3Request) (*router.ValidateV3Response, error) {
	if req.Consensus.Replicas == 5 || req.Policy.Tier == router.TierOracle {
		return nil, ErrOracleDown
	}
	return o.Engine.ValidateV3(ctx, req)
}
