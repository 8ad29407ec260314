package trust_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/reputation/reputationtest"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// TestClient_FeedbackByReceiptOnServiceClock: a report by receipt_id
// reads the receipt on the service's clock (the Issuer's Now, the clock
// that dated the receipt), not the wall clock: a receipt that is live by
// the service's clock is found, over HTTP, on a server that does not
// remember the call, and its report teaches the book.
func TestClient_FeedbackByReceiptOnServiceClock(t *testing.T) {
	priv, store, book := feedbackBook(t)
	signer, err := receipt.NewEd25519Signer(priv)
	if err != nil {
		t.Fatal(err)
	}
	// The service's clock runs 45 days behind the wall clock: a receipt
	// kept 30 days is live by it, and expired by the wall clock.
	then := time.Now().Add(-45 * 24 * time.Hour)
	now := func() time.Time { return then }
	receipts := &receipt.MemStore{}
	w := honest(0.9)
	var svcs []*trust.Service
	for range 2 {
		e, err := router.NewEngine(routertest.Sessions(1, 3, w, w, w), router.WithReputation(book))
		if err != nil {
			t.Fatal(err)
		}
		s, err := trust.New(e, trust.WithReceipts(&receipt.Issuer{Signer: signer, Store: receipts, Now: now}))
		if err != nil {
			t.Fatal(err)
		}
		svcs = append(svcs, s)
	}
	req := request(trust.ModeValidation, trust.PolicySafe)
	req.Receipt = receipt.Request{Mode: receipt.DeliveryInline, TTL: "30d",
		Include: receipt.Include{ConsensusSnapshot: true, RouterTraceRefs: true}}
	_, alice, _ := feedbackServer(t, svcs[0])
	resp, err := alice.Call(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	r, keys := receiptSessions(t, resp)
	before := reputationtest.Load(t, store, keys...)

	_, other, _ := feedbackServer(t, svcs[1]) // a server that does not remember the call
	if err := other.Feedback(context.Background(), r.ReceiptID, false); err != nil {
		t.Fatalf("alice's report by receipt id, live by the service's clock: %v", err)
	}
	if cmp.Equal(before, reputationtest.Load(t, store, keys...)) {
		t.Error("alice's report by receipt id left the records as they were")
	}
}
