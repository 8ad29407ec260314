package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/pgstore"
	"github.com/vouchkit/vouch/x402"
)

// A payment id released between the INSERT of a Begin, which finds it
// held, and the read of its record, which finds it gone, is begun by
// that Begin, as in memory: the id is free. The test holds the row's
// lock in one transaction, lets the Begin's INSERT queue behind it, then
// queues an exclusive lock of the table in a second transaction behind
// the INSERT, so that the Begin's read waits while the second
// transaction deletes the row, as Release does.
func TestPaymentIDStore_beginAfterRelease(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	s := db.PaymentIDs()
	const id = "0xpayer/payment-id-0000000001"
	if _, fresh, err := s.Begin(ctx, id, "first", t0, t0.Add(time.Hour)); err != nil || !fresh {
		t.Fatalf("first Begin = %v, %v; want it begun", fresh, err)
	}

	holder, holderPID := lockingTx(t, db, `SELECT 1 FROM vouch_x402_payment_ids WHERE id = $1 FOR UPDATE`, id)
	defer holder.Rollback(ctx)
	type begun struct {
		rec   x402.PaymentIDRecord
		fresh bool
		err   error
	}
	done := make(chan begun, 1)
	go func() {
		rec, fresh, err := s.Begin(ctx, id, "second", t0.Add(time.Minute), t0.Add(time.Hour))
		done <- begun{rec, fresh, err}
	}()
	blockedBy(t, db, holderPID)

	releaser, err := db.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer releaser.Rollback(ctx)
	var releaserPID int32
	if err := releaser.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&releaserPID); err != nil {
		t.Fatal(err)
	}
	locked := make(chan error, 1)
	go func() {
		_, err := releaser.Exec(ctx, `LOCK TABLE vouch_x402_payment_ids IN ACCESS EXCLUSIVE MODE`)
		locked <- err
	}()
	waitBlocked(t, db, releaserPID)
	if err := holder.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-locked; err != nil {
		t.Fatal(err)
	}
	if _, err := releaser.Exec(ctx, `DELETE FROM vouch_x402_payment_ids WHERE id = $1`, id); err != nil {
		t.Fatal(err)
	}
	if err := releaser.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	got := <-done
	if got.err != nil || !got.fresh {
		t.Fatalf("Begin of an id released while it ran = %v, %v; want it begun", got.fresh, got.err)
	}
	if diff := cmp.Diff(x402.PaymentIDRecord{Request: "second"}, got.rec); diff != "" {
		t.Errorf("record (-want +got):\n%s", diff)
	}
}

// waitBlocked returns once the backend pid waits for a lock.
func waitBlocked(t *testing.T, db *pgstore.DB, pid int32) {
	t.Helper()
	for {
		var n int
		if err := db.Pool().QueryRow(context.Background(), `SELECT cardinality(pg_blocking_pids($1))`, pid).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			return
		}
		time.Sleep(time.Millisecond)
	}
}
