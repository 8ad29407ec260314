package trust_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// TestHandler_Calls checks that the Handler counts the calls it admits on
// each route, receipt routes included, and not those it refuses.
func TestHandler_Calls(t *testing.T) {
	h, err := trust.NewHandler(&fakeCaller{}, trust.WithAuthenticator(router.KeyAuthenticator(map[string]string{testKey: "alice"})),
		trust.WithReceiptEndpoints(&receipt.MemStore{}, nil))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]int64{
		"POST /api/v4/trust": 0, "POST /api/v4/trial/trust": 0, "POST /api/v4/x402/trust": 0, "POST /api/v4/feedback": 0,
		"GET /api/v4/receipt/{receipt_id}": 0, "POST /api/v4/verify_receipt": 0,
	}
	if diff := cmp.Diff(want, h.Calls()); diff != "" {
		t.Fatalf("calls of a new Handler (-want +got):\n%s", diff)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	c := newClient(t, srv.URL)
	if _, err := c.Call(context.Background(), validationRequest()); err != nil {
		t.Fatal(err)
	}
	_, _ = c.FetchReceipt(context.Background(), "r-unknown")
	if resp, _ := rawPost(t, srv.URL+trust.CallPath, `{}`, "Authorization", ""); resp.StatusCode != http.StatusUnauthorized {
		t.Fatalf("call without a key = %d, want 401", resp.StatusCode)
	}
	// Admitted, then refused for their query or Content-Type: counted.
	if resp, _ := rawPost(t, srv.URL+trust.CallPath+"?x=1", `{}`); resp.StatusCode != http.StatusBadRequest {
		t.Fatalf("call with a query = %d, want 400", resp.StatusCode)
	}
	if resp, _ := rawPost(t, srv.URL+trust.CallPath, `{}`, "Content-Type", "text/plain"); resp.StatusCode != http.StatusUnsupportedMediaType {
		t.Fatalf("call of text/plain = %d, want 415", resp.StatusCode)
	}
	want["POST /api/v4/trust"], want["GET /api/v4/receipt/{receipt_id}"] = 3, 1
	if diff := cmp.Diff(want, h.Calls()); diff != "" {
		t.Errorf("calls (-want +got):\n%s", diff)
	}
}
