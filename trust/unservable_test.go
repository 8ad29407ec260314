package trust_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// TestService_Unservable: a three-session engine can never serve oracle's
// five replicas; one that serves only the fast tier can serve neither safe
// nor oracle; a session pool narrows what the service may use.
func TestService_Unservable(t *testing.T) {
	w := routertest.Verdict(router.VerdictValid)
	fastOnly := []router.Session{{ID: 1, Worker: w, Tiers: []router.Tier{router.TierFast}}, {ID: 2, Worker: w}, {ID: 3, Worker: w}}
	for _, tc := range []struct {
		name     string
		sessions []router.Session
		opts     []trust.Option
		want     []trust.Policy
	}{
		{"three sessions", routertest.Sessions(1, 3, w, w, w), nil, []trust.Policy{trust.PolicyOracle}},
		{"five sessions", routertest.Sessions(1, 5, w, w, w, w, w), nil, nil},
		{"two serve safe", fastOnly, nil, []trust.Policy{trust.PolicySafe, trust.PolicyOracle}},
		{"a pool of two of five", routertest.Sessions(1, 5, w, w, w, w, w), []trust.Option{trust.WithSessionPool(1, 2)}, []trust.Policy{trust.PolicySafe, trust.PolicyOracle}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e, err := router.NewEngine(tc.sessions)
			if err != nil {
				t.Fatal(err)
			}
			svc, err := trust.New(e, tc.opts...)
			if err != nil {
				t.Fatal(err)
			}
			got, err := svc.Unservable(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("unservable (-want +got):\n%s", diff)
			}
		})
	}
}

// TestService_Unservable_noStatus: a router that reports no sessions
// cannot be inspected: an error, not a guess.
func TestService_Unservable_noStatus(t *testing.T) {
	svc, err := trust.New(struct{ router.Service }{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := svc.Unservable(context.Background()); !errors.Is(err, trust.ErrNoStatus) {
		t.Errorf("err %v, want ErrNoStatus", err)
	}
}

// TestService_Call_unservable: an oracle call on a three-session engine
// is a 400 naming policy, not a retryable 503, and nothing runs.
func TestService_Call_unservable(t *testing.T) {
	rec := routertest.NewRecorder(routertest.Verdict(router.VerdictValid))
	e, err := router.NewEngine(routertest.Sessions(1, 3, rec, rec, rec))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := trust.New(e)
	if err != nil {
		t.Fatal(err)
	}
	_, err = svc.Call(context.Background(), &trust.Request{Mode: trust.ModeValidation, Policy: trust.PolicyOracle,
		Task: trust.Task{Type: "summary", Input: router.NewStringInput("x"), ClaimedResult: trust.JSON("x")}})
	var terr *trust.Error
	if !errors.As(err, &terr) || terr.Status != http.StatusBadRequest || len(terr.Errors) != 1 || terr.Errors[0].Field != "policy" {
		t.Fatalf("err %v, want a 400 naming policy", err)
	}
	if n := rec.Calls.Load(); n != 0 {
		t.Errorf("%d runs, want none", n)
	}
}
