package router_test

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

// TestEngine_validateV2UnservableRedundancy: a version 2 validation whose
// policy.redundancy this router can never serve is refused naming
// policy.redundancy, the member the body holds, not consensus.replicas,
// which a version 2 body has not (docs/INTERFACE.md, 6.2).
func TestEngine_validateV2UnservableRedundancy(t *testing.T) {
	V := routertest.Verdict(router.VerdictValid)
	e := newEngine(t, routertest.Sessions(1, 3, V, V, V))
	req := validateV2(1)
	req.Policy.Redundancy = router.Replicas5
	_, err := e.ValidateV2(context.Background(), req)
	p := asError(t, err, 400, "invalid_request")
	if diff := cmp.Diff([]string{"policy.redundancy"}, fields(p)); diff != "" {
		t.Errorf("fields (-want +got):\n%s", diff)
	}
}

// TestEngine_validateV2RedundancyNamedSession: with policy.redundancy 3
// the session a version 2 validation names still runs first, or the call
// is refused as with redundancy 1 (docs/INTERFACE.md, 5.5 and 6.2): a
// session that does not serve policy.tier is a 400 naming policy.tier,
// one cooling down a 503. It is never dropped in silence for others.
func TestEngine_validateV2RedundancyNamedSession(t *testing.T) {
	V := routertest.Verdict(router.VerdictValid)
	fail := routertest.Fail(errors.New("down"))
	e := newEngine(t, []router.Session{
		{ID: 1, Worker: V, Tiers: []router.Tier{router.TierOracle}},
		{ID: 2, Worker: fail}, {ID: 3, Worker: V}, {ID: 4, Worker: V}, {ID: 5, Worker: V},
	}, router.WithHealth(1, time.Hour))
	for _, redundancy := range []int{1, router.Replicas3} {
		req := validateV2(1) // tier safe, which session 1 does not serve
		req.Policy.Redundancy = redundancy
		_, err := e.ValidateV2(context.Background(), req)
		p := asError(t, err, http.StatusBadRequest, "invalid_request")
		if diff := cmp.Diff([]string{"policy.tier"}, fields(p)); diff != "" {
			t.Errorf("redundancy %d: fields (-want +got):\n%s", redundancy, diff)
		}
	}
	if _, err := e.ValidateV2(context.Background(), validateV2(2)); err == nil {
		t.Fatal("the failing session answered")
	}
	for _, redundancy := range []int{1, router.Replicas3} {
		req := validateV2(2) // cooling down now
		req.Policy.Redundancy = redundancy
		_, err := e.ValidateV2(context.Background(), req)
		asError(t, err, http.StatusServiceUnavailable, "unavailable")
	}
	req := validateV2(3)
	req.Policy.Redundancy = router.Replicas3
	got, err := e.ValidateV2(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if first := got.Evidence.Runs[0].SessionID; first != 3 {
		t.Errorf("first run on session %d, want the named session 3", first)
	}
}
