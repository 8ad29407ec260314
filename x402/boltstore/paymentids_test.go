package boltstore_test

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	bolt "go.etcd.io/bbolt"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/x402test"
)

func TestPaymentIDs(t *testing.T) {
	x402test.TestPaymentIDStore(t, func(t *testing.T) x402.PaymentIDStore {
		l := open(t, filepath.Join(t.TempDir(), "escrow.db"))
		t.Cleanup(func() { l.Close() })
		return l.PaymentIDs()
	})
}

// The first response to a payment id survives a restart: a retry after
// it gets the response kept before, and an expired id is deleted.
func TestPaymentIDs_durable(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "escrow.db")
	now := time.Date(2026, 11, 28, 12, 0, 0, 0, time.UTC)
	l := open(t, path)
	ids := l.PaymentIDs()
	if _, fresh, err := ids.Begin(ctx, "pay_0123456789abcdef", "req-1", now, now.Add(time.Hour)); err != nil || !fresh {
		t.Fatal(fresh, err)
	}
	kept := x402.PaymentIDRecord{Request: "req-1", Response: x402.BufferedResponse{Status: 200, Body: []byte("answer")}, Settlement: &x402.SettleResponse{Success: true, Transaction: "0x01"}}
	if err := ids.Finish(ctx, "pay_0123456789abcdef", now.Add(time.Hour), now.Add(time.Hour), kept); err != nil {
		t.Fatal(err)
	}
	l.Close()
	l = open(t, path)
	defer l.Close()
	ids = l.PaymentIDs()
	r, fresh, err := ids.Begin(ctx, "pay_0123456789abcdef", "req-1", now.Add(time.Minute), now.Add(time.Hour))
	if err != nil || fresh || !r.Done || string(r.Response.Body) != "answer" || r.Settlement == nil || r.Settlement.Transaction != "0x01" {
		t.Errorf("after a restart: %+v, %v, %v; want the kept response", r, fresh, err)
	}
	if n, err := ids.DeleteExpired(ctx, now.Add(time.Hour)); err != nil || n != 1 {
		t.Errorf("DeleteExpired = %d, %v; want 1", n, err)
	}
}

// A response kept by payment id before header values kept their bytes,
// as json.Marshal of the record wrote it, reads as it did then.
func TestPaymentIDs_oldRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "escrow.db")
	open(t, path).Close()
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	old := x402.PaymentIDRecord{Request: "req-1", Done: true,
		Response:   x402.BufferedResponse{Status: http.StatusOK, Header: http.Header{"X-Note": {"caf\ufffd", ""}}, Body: []byte("Paris")},
		Settlement: &x402.SettleResponse{Success: true, Transaction: "0xtx", Network: "eip155:84532"}}
	raw, err := json.Marshal(struct {
		Record x402.PaymentIDRecord
		Until  time.Time
	}{old, now.Add(time.Hour)})
	if err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error {
		return tx.Bucket([]byte("payment-id")).Put([]byte("pay_0123456789abcdef"), raw)
	})
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	l := open(t, path)
	defer l.Close()
	got, fresh, err := l.PaymentIDs().Begin(t.Context(), "pay_0123456789abcdef", "req-1", now, now.Add(time.Hour))
	if err != nil || fresh {
		t.Fatalf("Begin of an old record = %v, %v; want the record", fresh, err)
	}
	if diff := cmp.Diff(old, got); diff != "" {
		t.Errorf("old record read (-written +read):\n%s", diff)
	}
}
