package main

import (
	"context"
	"testing"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// TestRun_aboutAndStatusCoverTrust checks that GET /api/v1/about lists the
// price of the paid trust call the banner shows, and that GET
// /api/v1/status counts the /api/v4 calls beside the router's.
func TestRun_aboutAndStatusCoverTrust(t *testing.T) {
	base, _, _ := startServer(t)
	ctx := context.Background()
	rc, err := router.NewClient(base, router.WithAPIKey(defaultAPIKey), router.WithRetry(router.RetryPolicy{}))
	if err != nil {
		t.Fatal(err)
	}
	about, err := rc.About(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var trustPrice *router.RoutePrice
	for i, p := range about.Prices {
		if p.Method == "POST" && p.Path == trust.X402CallPath {
			trustPrice = &about.Prices[i]
		}
	}
	if trustPrice == nil || len(trustPrice.Accepts) != 1 || trustPrice.Accepts[0].Amount != "5000" {
		t.Errorf("about lists the trust call as %+v, want POST %s at 5000 atomic units ($0.005)", trustPrice, trust.X402CallPath)
	}

	if _, err := trustClient(t, base, defaultAPIKey).Call(ctx, validation(receipt.Request{})); err != nil {
		t.Fatal(err)
	}
	st, err := rc.Status(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if n, ok := st.Calls["POST "+trust.CallPath]; !ok || n != 1 {
		t.Errorf("status counts POST %s as %d (listed: %v), want 1", trust.CallPath, n, ok)
	}
	if _, ok := st.Calls["POST "+trust.X402CallPath]; !ok {
		t.Errorf("status does not list POST %s: %v", trust.X402CallPath, st.Calls)
	}
}
