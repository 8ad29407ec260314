package trust_test

import (
	"context"
	"errors"
	"testing"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// TestService_judgedCancelledBetweenCandidates: a judged delegation at
// safe whose first candidate the judges find INVALID; the caller cancels
// once that judgement has returned. The call reports context.Canceled,
// rather than stop producing and answer RETRY.
func TestService_judgedCancelledBetweenCandidates(t *testing.T) {
	answers := []string{changedYear, wordings[0], wordings[1], wordings[2], wordings[3], wordings[4]}
	workers := make([]router.Worker, len(answers))
	for i, a := range answers {
		workers[i] = probeWorker(a)
	}
	e, err := router.NewEngine(routertest.Sessions(1, len(workers), workers...))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	// Calls: the first candidate's delegation (1), its three judges (one
	// ValidateV3 call): cancel after the judges' call.
	svc, err := trust.New(&cancelAfter{Engine: e, n: 1, cancel: cancel}, trust.WithSessionPool(1, 2, 3, 4, 5, 6))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := svc.Call(ctx, probeRequest(trust.PolicySafe, trust.AgreementJudged))
	if !errors.Is(err, context.Canceled) {
		var status trust.Status
		if resp != nil {
			status = resp.Status
		}
		t.Errorf("cancelled call: err = %v, status %q; want context.Canceled", err, status)
	}
}
