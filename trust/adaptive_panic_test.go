package trust_test

import (
	"context"
	"testing"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// panicking is a router.Service whose version 3 validations panic.
type panicking struct{ *router.Engine }

func (panicking) ValidateV3(context.Context, *router.ValidateV3Request) (*router.ValidateV3Response, error) {
	panic("the router broke")
}

// A router.Service that panics under adaptive panics in the caller's
// goroutine, where an HTTP server recovers it, as under fast: not in a
// goroutine of the call's, where it would end the process.
func TestService_Call_routerPanicReachesCaller(t *testing.T) {
	w := honest(0.9)
	s, err := trust.New(panicking{newEngine(t, w, w, w, w, w)})
	if err != nil {
		t.Fatal(err)
	}
	for _, policy := range []trust.Policy{trust.PolicyFast, trust.PolicyAdaptive} {
		func() {
			defer func() {
				if v := recover(); v != "the router broke" {
					t.Errorf("%s: recovered %v, want the router's panic", policy, v)
				}
			}()
			s.Call(context.Background(), request(trust.ModeValidation, policy))
		}()
	}
}
