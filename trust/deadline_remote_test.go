package trust_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// deadlineAnswer is what must agree between a call on router.Engine and
// the same call over router.Client: the answer, or the error's status
// and code.
type deadlineAnswer struct {
	Status     trust.Status
	Labels     []router.Label
	Agreement  float64
	Confidence float64
	ErrStatus  int
	ErrCode    string
}

// callByDeadline makes a validation under p on rs, with a caller's
// deadline of d, and returns what must agree across routers.
func callByDeadline(t *testing.T, rs router.Service, p trust.Policy, ids []router.SessionID, d time.Duration) deadlineAnswer {
	t.Helper()
	svc, err := trust.New(rs, trust.WithSessionPool(ids...), trust.WithoutReputation())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), d)
	defer cancel()
	resp, err := svc.Call(ctx, &trust.Request{Mode: trust.ModeValidation, Policy: p,
		Task: trust.Task{Type: "summary", Input: router.NewStringInput("x"), ClaimedResult: trust.JSON("x")}})
	if err != nil {
		var terr *trust.Error
		if !errors.As(err, &terr) {
			t.Fatalf("%s: %v (%T), want an answer or a *trust.Error", p, err, err)
		}
		return deadlineAnswer{ErrStatus: terr.Status, ErrCode: string(terr.Code)}
	}
	labels := slices.Sorted(slices.Values(resp.Evidence.Verdicts))
	return deadlineAnswer{Status: resp.Status, Labels: labels,
		Agreement: resp.Evidence.Agreement, Confidence: resp.Confidence}
}

// TestService_Call_deadlineOverClient: with the caller's deadline on the
// context, a call over router.Client answers from the votes in, as the
// same call on router.Engine does, for every policy: the worker that
// hangs until its context ends is cut short by the deadline the Client
// sends as policy.timeout_ms, not by the caller giving up.
func TestService_Call_deadlineOverClient(t *testing.T) {
	valid := routertest.Verdict(router.VerdictValid)
	tests := []struct {
		policy  trust.Policy
		workers []router.Worker
	}{
		{trust.PolicyFast, []router.Worker{routertest.Hang()}},
		{trust.PolicySafe, []router.Worker{valid, routertest.Verdict(router.VerdictInvalid), routertest.Hang()}},
		{trust.PolicyOracle, []router.Worker{valid, valid, valid, valid, routertest.Hang()}},
		{trust.PolicyAdaptive, []router.Worker{routertest.Hang(), valid}},
	}
	for _, tt := range tests {
		t.Run(string(tt.policy), func(t *testing.T) {
			t.Parallel()
			sessions := routertest.Sessions(1, 1, tt.workers...)
			var ids []router.SessionID
			for _, s := range sessions {
				ids = append(ids, s.ID)
			}
			local, err := router.NewEngine(sessions)
			if err != nil {
				t.Fatal(err)
			}
			remote, err := router.NewEngine(routertest.Sessions(1, 1, tt.workers...))
			if err != nil {
				t.Fatal(err)
			}
			c := remoteRouter(t, remote)
			want := callByDeadline(t, local, tt.policy, ids, 2*time.Second)
			got := callByDeadline(t, c, tt.policy, ids, 2*time.Second)
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("over router.Client (-engine +client):\n%s", diff)
			}
			if want.ErrStatus == 0 && !slices.Contains(want.Labels, router.LabelTimeout) {
				t.Errorf("on router.Engine: runs %v, want the hanging one TIMEOUT", want.Labels)
			}
		})
	}
}
