package boltstore_test

import (
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
