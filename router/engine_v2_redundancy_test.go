package router_test

import (
	"context"
	"testing"

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
