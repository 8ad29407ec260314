package pgstore_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/x402"
)

// A backlog of expired rows larger than one batch is cleared in one
// DeleteExpired, batch after batch, and the count it returns is the rows
// it removed: here batches of 3 rows, and backlogs of none, less than a
// batch, exactly one, and several, one not a multiple of the batch.
func TestDB_DeleteExpiredInBatches(t *testing.T) {
	db := openDB(t)
	db.SetSweepBatch(3)
	ctx := context.Background()
	expired, live := t0.Add(time.Minute), t0.Add(2*time.Hour)
	backlog := map[string]int{"vouch_receipts": 8, "vouch_x402_replay": 6, "vouch_x402_outcomes": 3, "vouch_mcp_answers": 2, "vouch_x402_payment_ids": 0}
	keep := func(table string, i int, until time.Time) error {
		key := fmt.Sprintf("key-%d-%s", i, until.Format(time.RFC3339))
		switch table {
		case "vouch_receipts":
			return db.Receipts().Put(ctx, receipt.Record{ID: "rcpt_" + key, Data: []byte(`{}`), Owner: "key:a", Visibility: receipt.VisibilityPrivate, ExpiresAt: until})
		case "vouch_x402_replay":
			_, err := db.Replay().Reserve(ctx, key, t0, until)
			return err
		case "vouch_x402_outcomes":
			return db.Outcomes().Keep(ctx, key, x402.Outcome{Request: key}, until)
		case "vouch_mcp_answers":
			return db.Answers().Keep(ctx, key, "payer", []byte(`{}`), until)
		default:
			_, _, err := db.PaymentIDs().Begin(ctx, "payer/"+key, "request", t0, until)
			return err
		}
	}
	want := make(map[string]int)
	total := 0
	for table, n := range backlog {
		for i := range n {
			if err := keep(table, i, expired); err != nil {
				t.Fatalf("%s: %v", table, err)
			}
		}
		if err := keep(table, 0, live); err != nil {
			t.Fatalf("%s: %v", table, err)
		}
		want[table] = 1
		total += n
	}
	if n, err := db.DeleteExpired(ctx, t0.Add(time.Hour)); err != nil || n != total {
		t.Errorf("DeleteExpired = %d, %v; want %d", n, err, total)
	}
	got := make(map[string]int)
	for table := range backlog {
		var n int
		if err := db.Pool().QueryRow(ctx, "SELECT count(*) FROM "+table).Scan(&n); err != nil {
			t.Fatal(err)
		}
		got[table] = n
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("rows left by table (-want +got), the live one in each:\n%s", diff)
	}
	if n, err := db.DeleteExpired(ctx, t0.Add(time.Hour)); err != nil || n != 0 {
		t.Errorf("DeleteExpired again = %d, %v; want 0", n, err)
	}
}
