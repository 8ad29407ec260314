package trust_test

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// TestService_Call_reportsReceiptClamps checks that a receipt request
// beyond the environment is answered with the receipt's effective terms
// and, in receipt_clamped, which terms were narrowed and why, in process
// and over HTTP.
func TestService_Call_reportsReceiptClamps(t *testing.T) {
	w := honest(0.95)
	store := &receipt.MemStore{}
	prod, err := trust.New(newEngine(t, w, w, w), trust.WithReceipts(&receipt.Issuer{Store: store}))
	if err != nil {
		t.Fatal(err)
	}
	test, err := trust.New(newEngine(t, w, w, w), trust.WithReceipts(&receipt.Issuer{Store: store, Environment: receipt.TestEnvironment()}))
	if err != nil {
		t.Fatal(err)
	}
	closed, err := trust.New(newEngine(t, w, w, w), trust.WithReceipts(&receipt.Issuer{Store: store,
		Environment: receipt.Environment{Name: "closed", MaxTTLDays: 7, DefaultTTLDays: 7, MaxVisibility: receipt.VisibilityPrivate}}))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(mustHandler(t, prod))
	defer srv.Close()
	remote := newClient(t, srv.URL)

	tests := []struct {
		name   string
		caller trust.Caller
		rr     receipt.Request
		want   []trust.ReceiptClamp
	}{
		{"both, inline", prod, receipt.Request{Mode: receipt.DeliveryInline, TTL: "1000d", Visibility: receipt.VisibilityPublic}, []trust.ReceiptClamp{
			{Field: "receipt.ttl", Requested: "1000d", Effective: "90d", Reason: "the production environment keeps receipts at most 90d"},
			{Field: "receipt.visibility", Requested: "public", Effective: "shared",
				Reason: "public visibility is a future mode, not yet granted; the production environment grants at most shared visibility"},
		}},
		{"ttl, detached, over HTTP", remote, receipt.Request{Mode: receipt.DeliveryDetached, TTL: "365d"}, []trust.ReceiptClamp{
			{Field: "receipt.ttl", Requested: "365d", Effective: "90d", Reason: "the production environment keeps receipts at most 90d"},
		}},
		{"test environment", test, receipt.Request{Mode: receipt.DeliveryDetached, TTL: "30d", Visibility: receipt.VisibilityShared}, []trust.ReceiptClamp{
			{Field: "receipt.ttl", Requested: "30d", Effective: "7d", Reason: "the test environment keeps receipts at most 7d"},
		}},
		// Counterparties are valid with shared or public: the clamp
		// narrows the visibility and says so, as for any request.
		{"shared with counterparties, private environment", closed, receipt.Request{Mode: receipt.DeliveryInline, Visibility: receipt.VisibilityShared,
			Counterparties: []string{"bob"}}, []trust.ReceiptClamp{
			{Field: "receipt.visibility", Requested: "shared", Effective: "private", Reason: "the closed environment grants at most private visibility"},
		}},
		{"public with counterparties", prod, receipt.Request{Mode: receipt.DeliveryDetached, Visibility: receipt.VisibilityPublic,
			Counterparties: []string{"bob"}}, []trust.ReceiptClamp{
			{Field: "receipt.visibility", Requested: "public", Effective: "shared",
				Reason: "public visibility is a future mode, not yet granted; the production environment grants at most shared visibility"},
		}},
		{"within limits", prod, receipt.Request{Mode: receipt.DeliveryInline, TTL: "90d", Visibility: receipt.VisibilityShared}, nil},
		{"defaults", prod, receipt.Request{Mode: receipt.DeliveryInline}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			req := request(trust.ModeValidation, trust.PolicySafe)
			req.Receipt = tc.rr
			resp, err := tc.caller.Call(trust.WithCaller(context.Background(), "alice"), req)
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tc.want, resp.ReceiptClamped); diff != "" {
				t.Errorf("receipt_clamped (-want +got):\n%s", diff)
			}
		})
	}
}

func mustHandler(t *testing.T, c trust.Caller) *trust.Handler {
	t.Helper()
	h, err := trust.NewHandler(c, trust.WithAuthenticator(router.KeyAuthenticator(map[string]string{testKey: "alice"})))
	if err != nil {
		t.Fatal(err)
	}
	return h
}
