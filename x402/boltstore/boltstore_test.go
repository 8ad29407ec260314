package boltstore_test

import (
	"errors"
	"path/filepath"
	"testing"
	"time"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/boltstore"
	"github.com/vouchkit/vouch/x402/x402test"
)

func open(t testing.TB, path string) *boltstore.Ledger {
	t.Helper()
	l, err := boltstore.Open(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestLedger(t *testing.T) {
	x402test.TestEscrowLedger(t, func(t *testing.T, now func() time.Time) x402.EscrowLedger {
		l := open(t, filepath.Join(t.TempDir(), "escrow.db"))
		l.Now = now
		t.Cleanup(func() { l.Close() })
		return l
	})
}

// DeleteExpired forgets the payments past their refund deadline, held or
// finished, and keeps the others.
func TestLedger_deleteExpired(t *testing.T) {
	ctx := t.Context()
	l := open(t, filepath.Join(t.TempDir(), "escrow.db"))
	defer l.Close()
	early, late := x402test.Payment(1, "10"), x402test.Payment(2, "10")
	late.RefundDeadline = late.RefundDeadline.Add(time.Hour)
	for _, p := range []x402.EscrowPayment{early, late} {
		if _, _, err := l.Hold(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := l.DeleteExpired(ctx, early.RefundDeadline); err != nil || n != 1 {
		t.Fatalf("DeleteExpired = %d, %v; want 1", n, err)
	}
	if _, err := l.Get(ctx, early.ID); !errors.Is(err, x402.ErrEscrowUnknown) {
		t.Errorf("the expired payment: %v, want ErrEscrowUnknown", err)
	}
	held, err := l.Unfinished(ctx, 0)
	if err != nil || len(held) != 1 || held[0].ID != late.ID {
		t.Errorf("Unfinished after DeleteExpired = %d payments, %v; want the later one", len(held), err)
	}
}
