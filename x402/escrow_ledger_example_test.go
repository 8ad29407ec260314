package x402_test

import (
	"context"
	"fmt"
	"time"

	"github.com/vouchkit/vouch/x402"
)

// A hold, its verdict and its capture, each recorded once: a repeated
// capture replays the first outcome.
func ExampleMemoryEscrowLedger() {
	ctx := context.Background()
	now := time.Date(2026, 8, 20, 12, 0, 0, 0, time.UTC)
	ledger := &x402.MemoryEscrowLedger{Now: func() time.Time { return now }}
	p, _, _ := ledger.Hold(ctx, x402.EscrowPayment{
		ID: "0xfeed", Payer: "0x857b06519E91e3A54538791bDbb0E22373e36b66", Amount: "1000",
		HeldAt: now, CaptureDeadline: now.Add(time.Hour), RefundDeadline: now.Add(24 * time.Hour),
	})
	fmt.Println(p.State, p.Amount)
	ledger.Decide(ctx, p.ID, "VALID", "1000")
	capture := x402.EscrowOutcome{Key: x402.EscrowCapture, Operation: x402.EscrowCapture, Amount: "1000",
		Settlement: x402.SettleResponse{Success: true, Transaction: "0x01"}}
	p, _, fresh, _ := ledger.Record(ctx, p.ID, capture)
	fmt.Println(p.State, p.Captured, fresh)
	capture.Settlement.Transaction = "0x02"
	_, first, fresh, _ := ledger.Record(ctx, p.ID, capture)
	fmt.Println(first.Settlement.Transaction, fresh)
	// Output:
	// held 1000
	// captured 1000 true
	// 0x01 false
}
