package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	"testing"
	"time"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/x402test"
)

func TestEscrowLedger(t *testing.T) {
	x402test.TestEscrowLedger(t, func(t *testing.T, now func() time.Time) x402.EscrowLedger {
		l := openDB(t).Escrow()
		l.Now = now
		return l
	})
}

// Three servers on one database record the capture of one payment, four
// times each, at once, while each also tries to void it: exactly one
// capture is recorded and every other gets its outcome, and every void
// is refused, since the payment was captured (or, had a void won, every
// capture would be).
func TestEscrowLedger_serversRecordOnce(t *testing.T) {
	ctx := context.Background()
	dbs := openDBs(t, 3)
	p := x402test.Payment(1, "1000")
	if _, _, err := dbs[0].Escrow().Hold(ctx, p); err != nil {
		t.Fatal(err)
	}
	type result struct {
		o     x402.EscrowOutcome
		fresh bool
		err   error
		op    string
	}
	var (
		mu      sync.Mutex
		results []result
		wg      sync.WaitGroup
	)
	for i := range 12 {
		for _, op := range []string{x402.EscrowCapture, x402.EscrowVoid} {
			wg.Go(func() {
				o := x402.EscrowOutcome{Key: op, Operation: op, Settlement: x402.SettleResponse{Success: true, Transaction: fmt.Sprintf("0x%s%02d", op, i)}}
				if op == x402.EscrowCapture {
					o.Amount = "1000"
				}
				_, first, fresh, err := dbs[i%3].Escrow().Record(ctx, p.ID, o)
				mu.Lock()
				results = append(results, result{first, fresh, err, op})
				mu.Unlock()
			})
		}
	}
	wg.Wait()
	won := map[string][]x402.EscrowOutcome{}
	refused := map[string]int{}
	for _, r := range results {
		switch {
		case r.err != nil && errors.Is(r.err, x402.ErrEscrowState):
			refused[r.op]++
		case r.err != nil:
			t.Fatalf("Record(%s) = %v", r.op, r.err)
		default:
			won[r.op] = append(won[r.op], r.o)
			if r.fresh {
				won[r.op+" fresh"] = append(won[r.op+" fresh"], r.o)
			}
		}
	}
	if len(won) != 2 || len(won[x402.EscrowCapture+" fresh"])+len(won[x402.EscrowVoid+" fresh"]) != 1 {
		t.Fatalf("outcomes: %v; want one operation recorded once, by one Record", won)
	}
	for op, os := range won {
		if len(os) > 0 && !strings.HasSuffix(op, "fresh") {
			for _, o := range os {
				if diff := cmp.Diff(os[0], o, cmpopts.EquateApproxTime(time.Second)); diff != "" {
					t.Errorf("%s: a Record returned another outcome than the first (-first +got):\n%s", op, diff)
				}
			}
			if n := len(os) + refused[op]; n != 12 {
				t.Errorf("%s: %d answers, want 12", op, n)
			}
		}
	}
	got, err := dbs[2].Escrow().Get(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Operations) != 1 {
		t.Errorf("%d operations recorded, want 1: %+v", len(got.Operations), got.Operations)
	}
}

// DeleteExpired (and with it DB.DeleteExpired) forgets the payments past
// their refund deadline and keeps the others.
func TestEscrowLedger_deleteExpired(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	l := db.Escrow()
	early, late := x402test.Payment(1, "10"), x402test.Payment(2, "10")
	late.RefundDeadline = late.RefundDeadline.Add(time.Hour)
	for _, p := range []x402.EscrowPayment{early, late} {
		if _, _, err := l.Hold(ctx, p); err != nil {
			t.Fatal(err)
		}
	}
	if n, err := db.DeleteExpired(ctx, early.RefundDeadline); err != nil || n != 1 {
		t.Fatalf("DeleteExpired = %d, %v; want 1", n, err)
	}
	if _, err := l.Get(ctx, early.ID); !errors.Is(err, x402.ErrEscrowUnknown) {
		t.Errorf("the expired payment: %v, want ErrEscrowUnknown", err)
	}
	if _, err := l.Get(ctx, late.ID); err != nil {
		t.Errorf("the later payment: %v", err)
	}
}
