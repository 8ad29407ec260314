package trust_test

import (
	"context"
	"errors"
	"testing"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// TestService_safeLoneAnswer: safe answers a strict majority of at least
// two answers. A call of which one run answered and the others failed is
// RETRY, with reputation off and with reputation on before any outcome
// (whose weighted tally states the lone vote's 3/4): the weighted winner
// safe takes is one the outcomes back, or one the router stopped early
// for, never one answer left alone by failures.
func TestService_safeLoneAnswer(t *testing.T) {
	failed := routertest.Fail(errors.New("worker down"))
	for _, tt := range []struct {
		name string
		opts []router.EngineOption
	}{
		{"reputation off", []router.EngineOption{router.WithReputation(nil)}},
		{"reputation on, no outcome", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e, err := router.NewEngine(routertest.Sessions(1, 1, routertest.Verdict(router.VerdictValid), failed, failed), tt.opts...)
			if err != nil {
				t.Fatal(err)
			}
			s, err := trust.New(e)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := s.Call(context.Background(), request(trust.ModeValidation, trust.PolicySafe))
			if err != nil {
				t.Fatal(err)
			}
			if resp.Status != trust.StatusRetry || resp.Evidence.Answered != 1 {
				t.Errorf("status %s after %d answers of %d runs (verdicts %v), confidence %v; want RETRY after 1 answer",
					resp.Status, resp.Evidence.Answered, resp.Evidence.Launched, resp.Evidence.Verdicts, resp.Confidence)
			}
		})
	}
}
