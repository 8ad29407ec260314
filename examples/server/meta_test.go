package main

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// TestRun_aboutAndStatusCoverTrust checks that GET /api/v1/about lists the
// price of the paid trust call the banner shows, and that GET
// /api/v1/status counts the /api/v4 calls beside the router's.
func TestRun_aboutAndStatusCoverTrust(t *testing.T) {
	t.Parallel()
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
	if trustPrice == nil {
		t.Fatalf("about does not list POST %s: %+v", trust.X402CallPath, about.Prices)
	}
	// Every offer the route accepts: exact and auth-capture (both
	// asset-transfer methods) at $0.005, and adaptive's runs by upto and
	// auth-capture at $0.001 a run.
	type offer struct{ Scheme, Amount, Method string }
	var got []offer
	for _, o := range trustPrice.Accepts {
		m, _ := o.Extra["assetTransferMethod"].(string)
		got = append(got, offer{o.Scheme, o.Amount, m})
	}
	want := []offer{
		{x402.SchemeExact, "5000", ""},
		{x402.SchemeAuthCapture, "5000", evm.TransferEIP3009},
		{x402.SchemeAuthCapture, "5000", evm.TransferPermit2},
		{x402.SchemeUpto, "1000", evm.TransferPermit2},
		{x402.SchemeAuthCapture, "1000", evm.TransferEIP3009},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("about lists the trust call's offers (-want +got):\n%s", diff)
	}
	// An escrow offer's deadlines are set by each 402 answer, from its
	// moment: the list has none to show.
	for _, o := range trustPrice.Accepts {
		for _, k := range []string{"captureDeadline", "refundDeadline"} {
			if v, ok := o.Extra[k]; ok {
				t.Errorf("about lists the %s offer (%s) with extra.%s %v, want it left out", o.Scheme, o.Amount, k, v)
			}
		}
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
