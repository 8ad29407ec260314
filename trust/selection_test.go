package trust_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// TestService_adaptiveBeforeAnyOutcome checks that before any outcome is
// reported in the scope, adaptive over an engine that keeps reputation
// runs, call by call, the sessions it runs with reputation off: nothing
// tells them apart yet, so both take them in the service's rotation.
func TestService_adaptiveBeforeAnyOutcome(t *testing.T) {
	ctx := context.Background()
	valid, invalid := routertest.Verdict(router.VerdictValid), routertest.Verdict(router.VerdictInvalid)
	firstTwo := func(opts ...trust.Option) [][]router.SessionID {
		t.Helper()
		e, err := router.NewEngine(routertest.Sessions(1, 5, valid, valid, invalid, valid, invalid))
		if err != nil {
			t.Fatal(err)
		}
		svc, err := trust.New(e, append(opts, trust.WithSessionPool(1, 2, 3, 4, 5))...)
		if err != nil {
			t.Fatal(err)
		}
		var calls [][]router.SessionID
		for i := range 12 {
			resp, err := svc.Call(ctx, request(trust.ModeValidation, trust.PolicyAdaptive))
			if err != nil {
				t.Fatalf("call %d: %v", i, err)
			}
			var ran []router.SessionID
			for _, st := range resp.Evidence.Steps {
				ran = append(ran, st.Sessions...)
			}
			if len(ran) < 2 {
				t.Fatalf("call %d ran %v, want two sessions or more", i, ran)
			}
			calls = append(calls, ran[:2])
		}
		return calls
	}
	off, on := firstTwo(trust.WithoutReputation()), firstTwo()
	if diff := cmp.Diff(off, on); diff != "" {
		t.Errorf("the first two sessions of each call (-reputation off +on):\n%s", diff)
	}
}
