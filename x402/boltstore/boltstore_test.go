package boltstore_test

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	bolterrors "go.etcd.io/bbolt/errors"

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

// Unfinished lists the held payments oldest hold first, as
// x402.EscrowLedger says, or the ledger refuses a hold it could not
// list in order: one whose time is the zero time or before 1970, which
// its index used to put after every later hold.
func TestLedger_holdTimeOrder(t *testing.T) {
	ctx := t.Context()
	l := open(t, filepath.Join(t.TempDir(), "escrow.db"))
	defer l.Close()
	if _, _, err := l.Hold(ctx, x402test.Payment(1, "10")); err != nil {
		t.Fatal(err)
	}
	for _, at := range []time.Time{{}, time.Date(1969, 12, 31, 0, 0, 0, 0, time.UTC), time.Date(2300, 1, 1, 0, 0, 0, 0, time.UTC)} {
		p := x402test.Payment(2, "10")
		p.ID += at.Format("2006")
		p.HeldAt = at
		if _, _, err := l.Hold(ctx, p); err != nil {
			if _, err := l.Get(ctx, p.ID); !errors.Is(err, x402.ErrEscrowUnknown) {
				t.Errorf("a refused hold at %s is kept: Get = %v", at, err)
			}
			continue
		}
		held, err := l.Unfinished(ctx, 0)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.IsSortedFunc(held, func(a, b x402.EscrowPayment) int { return a.HeldAt.Compare(b.HeldAt) }) {
			t.Errorf("a hold at %s was taken and Unfinished lists the holds out of order: %v, %v", at, held[0].HeldAt, held[1].HeldAt)
		}
		if _, err := l.DeleteExpired(ctx, time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)); err != nil {
			t.Fatal(err)
		}
		if _, _, err := l.Hold(ctx, x402test.Payment(1, "10")); err != nil {
			t.Fatal(err)
		}
	}
}

// A file another ledger holds open is refused after the lock timeout,
// with an error that says the file is locked, not bbolt's bare "timeout".
func TestOpen_locked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "escrow.db")
	l := open(t, path)
	defer l.Close()
	l2, err := boltstore.Open(path, 10*time.Millisecond)
	if err == nil {
		l2.Close()
		t.Fatal("a second Open of a locked file succeeded")
	}
	if !errors.Is(err, bolterrors.ErrTimeout) || !strings.Contains(err.Error(), "still holds it locked") {
		t.Errorf("Open of a locked file = %v, want bolterrors.ErrTimeout saying the file is locked", err)
	}
}
