package router_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

// TestEngine_overLoopback runs the engine behind NewHandler and calls it
// with a Client over real loopback: the answers and the errors, with
// their evidence, must read as they do in-process.
func TestEngine_overLoopback(t *testing.T) {
	V, I := routertest.Verdict(router.VerdictValid), routertest.Verdict(router.VerdictInvalid)
	e := newEngine(t, routertest.Sessions(1, 3, V, I, V))
	h, err := router.NewHandler(e, router.WithAuthenticator(router.KeyAuthenticator(map[string]string{"k": "tests"})))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	c, err := router.NewClient(srv.URL, router.WithAPIKey("k"), router.WithRetry(router.RetryPolicy{}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()

	got, err := c.ValidateV3(ctx, validateV3(3, router.DisagreeReturnAll))
	if err != nil {
		t.Fatalf("ValidateV3 over loopback: %v", err)
	}
	if want := []router.Label{lV, lI, lV}; got.Verdict != router.VerdictValid || !cmp.Equal(got.Consensus.Verdicts, want) ||
		len(got.Evidence.Runs) != 3 {
		t.Errorf("response = %+v, want VALID with verdicts %v and three runs", got, want)
	}

	_, err = c.ValidateV3(ctx, validateV3(3, router.DisagreeFailHard))
	p := asError(t, err, http.StatusConflict, "disagreement")
	var extra struct {
		Runs      []router.Run             `json:"runs"`
		Consensus router.ConsensusResponse `json:"consensus"`
	}
	if err := json.Unmarshal(p.Extra, &extra); err != nil || len(extra.Runs) != 3 || extra.Consensus.Replicas != 3 {
		t.Errorf("fail_hard extra = %s (%v), want three runs and the consensus block", p.Extra, err)
	}

	// Validate v2 with policy.redundancy 3 (docs/INTERFACE.md, 5.5): three replicas,
	// session_id first, each in evidence.runs.
	v2 := validateV2(2)
	v2.Policy.Redundancy = router.Replicas3
	got2, err := c.ValidateV2(ctx, v2)
	if err != nil {
		t.Fatalf("ValidateV2 with redundancy 3 over loopback: %v", err)
	}
	if want := []router.Label{lI, lV, lV}; got2.Verdict != router.VerdictValid || !cmp.Equal(labelsOf(got2.Evidence.Runs), want) ||
		got2.Evidence.Runs[0].SessionID != 2 {
		t.Errorf("response = %+v, want VALID with runs %v, the first on session 2", got2, want)
	}

	_, err = c.ValidateV2(ctx, validateV2(99))
	p = asError(t, err, http.StatusBadRequest, "invalid_request")
	if !cmp.Equal(fields(p), []string{"session_id"}) {
		t.Errorf("fields = %v, want session_id", fields(p))
	}

	d, err := c.DelegateV1(ctx, &router.DelegateV1Request{SessionID: 1, TaskRequestInput: "hi"})
	var rerr *router.Error
	if !errors.As(err, &rerr) || rerr.Code != "all_replicas_failed" || d != nil {
		t.Errorf("DelegateV1 on a verdict-only worker = %v, %v; want 502 all_replicas_failed", d, err)
	}
}
