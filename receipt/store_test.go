package receipt_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/receipt/receipttest"
)

func TestMemStore(t *testing.T) {
	receipttest.TestStore(t, func(*testing.T) receipt.Store { return &receipt.MemStore{} })
}

// countingStore counts DeleteExpired calls.
type countingStore struct {
	receipt.MemStore
	sweeps atomic.Int64
	done   chan struct{}
}

func (s *countingStore) DeleteExpired(ctx context.Context, now time.Time) (int, error) {
	if s.sweeps.Add(1) == 2 {
		close(s.done)
	}
	return s.MemStore.DeleteExpired(ctx, now)
}

func TestSweep(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	s := &countingStore{done: make(chan struct{})}
	is := &receipt.Issuer{Store: s, Now: t0}
	out := issue(t, is, fullParams())
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	later := func() time.Time { return out.ExpiresAt }
	go func() { errc <- receipt.Sweep(ctx, s, time.Millisecond, later, nil) }()
	<-s.done // two sweeps have run
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("Sweep returned %v, want context.Canceled", err)
	}
	// Swept: gone even when looked up at a time before its expiry.
	if _, err := s.Get(context.Background(), out.Receipt.ReceiptID, t0()); !errors.Is(err, receipt.ErrNotFound) {
		t.Errorf("after Sweep, Get = %v; want ErrNotFound", err)
	}
}

func TestSweep_badInterval(t *testing.T) {
	if err := receipt.Sweep(context.Background(), &receipt.MemStore{}, 0, nil, nil); err == nil {
		t.Error("Sweep(every 0) = nil, want an error")
	}
}

func TestFetch(t *testing.T) {
	is, store := newIssuer(t, newSigner(t, 1))
	p := fullParams()
	p.Counterparties = []string{"party-b", "party-c"}
	shared := issue(t, is, p)
	p.Request.Visibility = receipt.VisibilityPrivate
	private := issue(t, is, p)
	p.Request.Visibility = receipt.VisibilityPublic // clamped to shared
	public := issue(t, is, p)
	live, expired := t0().Add(time.Hour), shared.ExpiresAt

	tests := []struct {
		name   string
		id     string
		caller string
		now    time.Time
		ok     bool
	}{
		{"owner, shared", shared.Receipt.ReceiptID, "owner-a", live, true},
		{"counterparty, shared", shared.Receipt.ReceiptID, "party-c", live, true},
		{"stranger, shared", shared.Receipt.ReceiptID, "mallory", live, false},
		{"owner, private", private.Receipt.ReceiptID, "owner-a", live, true},
		{"counterparty, private", private.Receipt.ReceiptID, "party-b", live, false},
		{"counterparty, public clamped to shared", public.Receipt.ReceiptID, "party-b", live, true},
		{"stranger, public clamped to shared", public.Receipt.ReceiptID, "mallory", live, false},
		{"owner, expired", shared.Receipt.ReceiptID, "owner-a", expired, false},
		{"counterparty, expired", shared.Receipt.ReceiptID, "party-b", expired, false},
		{"empty caller", shared.Receipt.ReceiptID, "", live, false},
		{"unknown id", receipt.NewID(), "owner-a", live, false},
		{"malformed id", "../../etc/passwd", "owner-a", live, false},
	}
	for _, tc := range tests {
		rec, err := receipt.Fetch(context.Background(), store, tc.id, tc.caller, tc.now)
		switch {
		case tc.ok && (err != nil || rec.ID != tc.id):
			t.Errorf("%s: Fetch = %+v, %v; want the record", tc.name, rec.ID, err)
		case !tc.ok && (err != receipt.ErrNotFound || rec.ID != ""):
			t.Errorf("%s: Fetch = %q, %v; want exactly ErrNotFound", tc.name, rec.ID, err)
		}
	}
}

func TestFetch_storeError(t *testing.T) {
	_, err := receipt.Fetch(context.Background(), failingStore{}, receipt.NewID(), "owner-a", t0())
	if !errors.Is(err, errStore) || errors.Is(err, receipt.ErrNotFound) {
		t.Errorf("Fetch over a failing store = %v, want the store's error", err)
	}
}
