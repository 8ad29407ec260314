package boltstore_test

import (
	"encoding/json"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"
	bolt "go.etcd.io/bbolt"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/x402test"
)

func TestOutcomes(t *testing.T) {
	x402test.TestOutcomeStore(t, func(t *testing.T) x402.OutcomeStore {
		l := open(t, filepath.Join(t.TempDir(), "escrow.db"))
		t.Cleanup(func() { l.Close() })
		return l.Outcomes()
	})
}

// The answer a pending capture buys survives a restart: the file opened
// again holds it, and an expired outcome is deleted.
func TestOutcomes_durable(t *testing.T) {
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "escrow.db")
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	pending := x402.Outcome{Request: "req-1", Payer: "0xpayer", PendingCapture: "0xpayment",
		Response: x402.BufferedResponse{Status: http.StatusOK, Header: http.Header{"Content-Type": {"text/plain"}}, Body: []byte("Paris")},
		Usage:    &x402.Usage{Amount: 20_000, Units: 2, Unit: "run", MaxAmount: 50_000}}
	l := open(t, path)
	if err := l.Outcomes().Keep(ctx, "key-1", pending, now.Add(10*time.Minute)); err != nil {
		t.Fatal(err)
	}
	if err := l.Outcomes().Keep(ctx, "key-2", x402.Outcome{Request: "req-2"}, now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	l.Close()

	l = open(t, path)
	defer l.Close()
	got, ok, err := l.Outcomes().Lookup(ctx, "key-1", now)
	if err != nil || !ok {
		t.Fatalf("Lookup after reopening = %v, %v; want the outcome", ok, err)
	}
	if diff := cmp.Diff(pending, got); diff != "" {
		t.Errorf("outcome after reopening (-kept +read):\n%s", diff)
	}
	n, err := l.Outcomes().DeleteExpired(ctx, now.Add(5*time.Minute))
	if err != nil || n != 1 {
		t.Errorf("DeleteExpired = %d, %v; want 1 (key-2)", n, err)
	}
	if _, ok, _ := l.Outcomes().Lookup(ctx, "key-1", now.Add(5*time.Minute)); !ok {
		t.Error("key-1 deleted before its time")
	}
}

// FuzzOutcomes keeps any outcome a gated route may buy, its answer's
// header and body and its settlement as they come, and reads it back
// from the file: the outcome read is the one kept, byte for byte, so
// that a retry gets the answer the payment bought. (A payer and a
// transaction that are not UTF-8 are left out: a facilitator's JSON
// answer cannot carry them.)
func FuzzOutcomes(f *testing.F) {
	f.Add(http.StatusOK, "text/plain; charset=utf-8", []byte("Paris"), "0xpayer", "0xtx", uint64(20_000))
	f.Add(http.StatusPaymentRequired, "caf\u00e9", []byte{0xff, 0}, "", "", uint64(0))
	f.Add(http.StatusOK, "caf\xe9", []byte("caf\xe9"), "0xpayer", "0xtx", uint64(1))
	l := open(f, filepath.Join(f.TempDir(), "escrow.db"))
	f.Cleanup(func() { l.Close() })
	now := time.Date(2026, 12, 3, 12, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, status int, value string, body []byte, payer, tx string, amount uint64) {
		control := func(r rune) bool { return r < ' ' && r != '\t' || r == 0x7f }
		if strings.ContainsFunc(value, control) || !utf8.ValidString(payer) || !utf8.ValidString(tx) {
			return
		}
		kept := x402.Outcome{
			Request: "req", Payer: payer, Delivered: tx != "",
			Response: x402.BufferedResponse{Status: status, Header: http.Header{"X-Note": {value}}, Body: body},
			Usage:    &x402.Usage{Amount: amount, MaxAmount: amount},
		}
		if tx != "" {
			kept.Settlement = &x402.SettleResponse{Success: true, Payer: payer, Transaction: tx, Network: "eip155:84532"}
		}
		if err := l.Outcomes().Keep(t.Context(), "key", kept, now.Add(time.Minute)); err != nil {
			t.Fatal(err)
		}
		got, ok, err := l.Outcomes().Lookup(t.Context(), "key", now)
		if err != nil || !ok {
			t.Fatalf("Lookup = %v, %v; want the outcome kept", ok, err)
		}
		if diff := cmp.Diff(kept, got, cmpopts.EquateEmpty()); diff != "" {
			t.Errorf("outcome read back (-kept +read):\n%s", diff)
		}
	})
}

// An outcome written before header values kept their bytes, as
// json.Marshal of the Outcome wrote it, reads as it did then.
func TestOutcomes_oldRecord(t *testing.T) {
	path := filepath.Join(t.TempDir(), "escrow.db")
	open(t, path).Close()
	until := time.Date(2026, 12, 3, 12, 10, 0, 0, time.UTC)
	old := x402.Outcome{Request: "req-1", Payer: "0xpayer", Delivered: true,
		Response: x402.BufferedResponse{Status: http.StatusOK,
			Header: http.Header{"Content-Type": {"text/plain"}, "X-Note": {"caf\ufffd", ""}, "X-Nil": nil}, Body: []byte("Paris")},
		Settlement: &x402.SettleResponse{Success: true, Payer: "0xpayer", Transaction: "0xtx", Network: "eip155:84532"}}
	raw, err := json.Marshal(struct {
		Outcome x402.Outcome
		Until   time.Time
	}{old, until})
	if err != nil {
		t.Fatal(err)
	}
	db, err := bolt.Open(path, 0o600, nil)
	if err != nil {
		t.Fatal(err)
	}
	err = db.Update(func(tx *bolt.Tx) error { return tx.Bucket([]byte("outcome")).Put([]byte("key-1"), raw) })
	db.Close()
	if err != nil {
		t.Fatal(err)
	}
	l := open(t, path)
	defer l.Close()
	got, ok, err := l.Outcomes().Lookup(t.Context(), "key-1", until.Add(-time.Minute))
	if err != nil || !ok {
		t.Fatalf("Lookup of an old record = %v, %v; want the outcome", ok, err)
	}
	if diff := cmp.Diff(old, got); diff != "" {
		t.Errorf("old record read (-written +read):\n%s", diff)
	}
}
