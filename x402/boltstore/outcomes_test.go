package boltstore_test

import (
	"net/http"
	"path/filepath"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

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
