package x402_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/x402test"
)

func TestMemoryEscrowLedger(t *testing.T) {
	x402test.TestEscrowLedger(t, func(t *testing.T, now func() time.Time) x402.EscrowLedger {
		return &x402.MemoryEscrowLedger{Now: now}
	})
}

// TestMemoryEscrowLedger_bounded: a full ledger refuses a new hold until
// a payment can no longer change, and then forgets it.
func TestMemoryEscrowLedger_bounded(t *testing.T) {
	ctx := context.Background()
	now := x402test.Payment(0, "1").HeldAt
	l := &x402.MemoryEscrowLedger{MaxPayments: 2, Now: func() time.Time { return now }}
	for n := range 2 {
		if _, _, err := l.Hold(ctx, x402test.Payment(n, "1")); err != nil {
			t.Fatal(err)
		}
	}
	if _, _, err := l.Hold(ctx, x402test.Payment(2, "1")); !errors.Is(err, x402.ErrEscrowLedgerFull) {
		t.Fatalf("Hold in a full ledger = %v, want ErrEscrowLedgerFull", err)
	}
	if _, _, err := l.Hold(ctx, x402test.Payment(1, "1")); err != nil {
		t.Errorf("a repeated Hold in a full ledger = %v, want its replay", err)
	}
	p := x402test.Payment(0, "1")
	now = p.CaptureDeadline.Add(time.Second) // both holds can no longer be captured
	if _, _, err := l.Hold(ctx, x402test.Payment(2, "1")); err != nil {
		t.Fatalf("Hold after the capture deadlines = %v", err)
	}
	if _, err := l.Get(ctx, p.ID); !errors.Is(err, x402.ErrEscrowUnknown) {
		t.Errorf("a hold past its capture deadline was kept: %v", err)
	}
}

// A voided payment can no longer change and has nothing to dispute: a
// full ledger forgets it to make room, so that one payer's free calls,
// each voided, never fill the ledger for every other payer.
func TestMemoryEscrowLedger_voidedMakeRoom(t *testing.T) {
	ctx := context.Background()
	now := x402test.Payment(0, "1").HeldAt
	l := &x402.MemoryEscrowLedger{MaxPayments: 2, Now: func() time.Time { return now }}
	for n := range 2 {
		if _, _, err := l.Hold(ctx, x402test.Payment(n, "1")); err != nil {
			t.Fatal(err)
		}
	}
	void := x402.EscrowOutcome{Key: x402.EscrowVoid, Operation: x402.EscrowVoid, Settlement: x402.SettleResponse{Success: true}}
	if _, _, _, err := l.Record(ctx, x402test.Payment(0, "1").ID, void); err != nil {
		t.Fatal(err)
	}
	if _, _, err := l.Hold(ctx, x402test.Payment(2, "1")); err != nil {
		t.Fatalf("Hold in a ledger full of a voided payment = %v, want room", err)
	}
	if p, err := l.Get(ctx, x402test.Payment(1, "1").ID); err != nil || p.State != x402.EscrowHeld {
		t.Errorf("the held payment = %+v, %v; want it kept", p, err)
	}
	if _, _, err := l.Hold(ctx, x402test.Payment(3, "1")); !errors.Is(err, x402.ErrEscrowLedgerFull) {
		t.Errorf("Hold in a ledger full of held payments = %v, want ErrEscrowLedgerFull", err)
	}
}
