package boltstore_test

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/x402test"
)

const childPath = "VOUCH_X402_BOLTSTORE_CHILD"

// A server killed with SIGKILL between its holds and their capture or
// void leaves them in its file, and the restarted server finishes them
// by their recorded verdicts: the VALID one captured, the INVALID one
// and the one without a verdict voided, each operation sent once; run
// again, recovery sends nothing.
func TestLedger_killedBetweenHoldAndVerdict(t *testing.T) {
	if x402test.KillChild() {
		l := open(t, os.Getenv(childPath))
		x402test.RunKillChild(l)
		return
	}
	path := filepath.Join(t.TempDir(), "escrow.db")
	bed := x402test.NewEscrowBed(t)
	x402test.KillBetweenHoldAndVerdict(t, bed, "TestLedger_killedBetweenHoldAndVerdict", []string{childPath + "=" + path}, 1, func() x402.EscrowLedger {
		l := open(t, path)
		t.Cleanup(func() { l.Close() })
		return l
	})
}
