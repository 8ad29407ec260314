package trustmcp_test

import (
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/trustmcp"
)

// The tools on a remote trust service: a trust.Client is both the Caller
// and the Receipts, and its API key names the caller.
func TestServer_remoteClient(t *testing.T) {
	f := newFixture(t)
	h, err := trust.NewHandler(f.svc,
		trust.WithAuthenticator(router.KeyAuthenticator(map[string]string{"demo-key": "demo", "acme-key": "acme"})),
		trust.WithReceiptEndpoints(f.store, f.verifier))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	client := func(key string) *trust.Client {
		c, err := trust.NewClient(srv.URL, trust.WithAPIKey(key), trust.WithRetry(router.RetryPolicy{}))
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	demo, acme := client("demo-key"), client("acme-key")
	ds := newSession(t, trustmcp.Config{Caller: demo, Receipts: demo})
	as := newSession(t, trustmcp.Config{Caller: acme, Receipts: acme})

	var resp trust.Response
	decode(t, callTool(t, ds, "validate_claim", map[string]any{"claimed_result": "17 * 3 = 51", "receipt": "inline"}), &resp)
	issued, err := receipt.Parse(resp.Receipt)
	if err != nil || resp.Status != trust.StatusValid {
		t.Fatalf("remote validate_claim: %s, receipt %s (%v)", resp.Status, resp.Receipt, err)
	}
	var got trustmcp.ReceiptResult
	decode(t, callTool(t, ds, "get_receipt", map[string]any{"receipt_id": issued.ReceiptID}), &got)
	var vr receipt.VerifyResponse
	decode(t, callTool(t, ds, "verify_receipt", map[string]any{"receipt": got.Receipt}), &vr)
	if !vr.Valid {
		t.Errorf("remote verify_receipt = %+v, want valid", vr)
	}
	res := callTool(t, as, "get_receipt", map[string]any{"receipt_id": issued.ReceiptID})
	if !res.IsError || !strings.Contains(text(res), "no receipt") {
		t.Errorf("acme's get_receipt of demo's receipt: %v %q, want the not-found tool error", res.IsError, text(res))
	}
	// A service that cannot be reached is a tool error, not a protocol error.
	gone := httptest.NewServer(h)
	gone.Close()
	dead, err := trust.NewClient(gone.URL, trust.WithAPIKey("demo-key"), trust.WithRetry(router.RetryPolicy{}))
	if err != nil {
		t.Fatal(err)
	}
	res = callTool(t, newSession(t, trustmcp.Config{Caller: dead}), "validate_claim", map[string]any{"claimed_result": "17 * 3 = 51"})
	if !res.IsError || !strings.HasPrefix(text(res), "validate_claim: ") {
		t.Errorf("unreachable service: %v %q, want a tool error", res.IsError, text(res))
	}
}
