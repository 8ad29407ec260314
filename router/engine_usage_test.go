package router_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

// TestEngine_v2Usage checks that the usage a worker reports reaches the
// version 2 responses of one run over loopback (docs/INTERFACE.md, 5.4
// and 5.5: evidence.usage when the worker reported any).
func TestEngine_v2Usage(t *testing.T) {
	spent := &router.Usage{PromptTokens: 11, CompletionTokens: 22, Cost: 0.25}
	delegate := routertest.Fixed(router.Result{Output: "done", Usage: spent})
	validate := routertest.Fixed(router.Result{Verdict: router.VerdictValid, Confidence: 0.9, Usage: spent})
	e := newEngine(t, []router.Session{{ID: 1, Worker: delegate}, {ID: 2, Worker: validate}})
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

	d, err := c.DelegateV2(ctx, &router.DelegateV2Request{SessionID: 1, DelegateTask: router.DelegateTask{Objective: "go"}})
	if err != nil {
		t.Fatalf("DelegateV2: %v", err)
	}
	if diff := cmp.Diff(spent, d.Evidence.Usage); diff != "" {
		t.Errorf("DelegateV2 evidence.usage (-want +got):\n%s", diff)
	}

	v, err := c.ValidateV2(ctx, &router.ValidateV2Request{SessionID: 2, ValidateTask: router.ValidateTask{
		Claim: router.Claim{Type: "summary", Output: raw(`"s"`)}}})
	if err != nil {
		t.Fatalf("ValidateV2: %v", err)
	}
	if diff := cmp.Diff(spent, v.Evidence.Usage); diff != "" {
		t.Errorf("ValidateV2 evidence.usage (-want +got):\n%s", diff)
	}
}
