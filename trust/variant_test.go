package trust_test

import (
	"context"
	"errors"
	"testing"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// TestService_variantWithoutVersion3 runs a trust service over a
// router.Client on loopback with WithVariant(trial): version 3 has no
// trial variant, so every tier that calls it fails with
// router.ErrNoVariant, adaptive included, rather than answer RETRY as
// if its runs had failed on the sessions.
func TestService_variantWithoutVersion3(t *testing.T) {
	w := honest(0.9)
	c := remoteRouter(t, newEngine(t, w, w, w, w, w))
	s, err := trust.New(c, trust.WithVariant(router.VariantTrial))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []trust.Policy{trust.PolicyFast, trust.PolicySafe, trust.PolicyOracle, trust.PolicyAdaptive} {
		resp, err := s.Call(context.Background(), request(trust.ModeValidation, p))
		if !errors.Is(err, router.ErrNoVariant) {
			t.Errorf("%s over a trial Client: %+v, %v; want an error wrapping router.ErrNoVariant", p, resp, err)
		}
	}
}
