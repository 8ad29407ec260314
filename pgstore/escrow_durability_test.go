package pgstore_test

import (
	"context"
	"os"
	"testing"

	"github.com/vouchkit/vouch/pgstore"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/x402test"
)

const escrowChildSchema = "VOUCH_PGSTORE_ESCROW_CHILD_SCHEMA"

// A server killed with SIGKILL between its holds and their capture or
// void leaves them in the database, and three servers restarting at once
// finish them by their recorded verdicts: the VALID one captured, the
// INVALID one and the one without a verdict voided, each operation sent
// once between them (a recovery claims a payment before it sends); run
// again, recovery sends nothing.
func TestEscrowLedger_killedBetweenHoldAndVerdict(t *testing.T) {
	if x402test.KillChild() {
		db, err := pgstore.Open(context.Background(), databaseURL(t), pgstore.WithSchema(os.Getenv(escrowChildSchema)))
		if err != nil {
			t.Fatal(err)
		}
		x402test.RunKillChild(db.Escrow())
		return
	}
	dbs := openDBs(t, 3)
	schema := ""
	if err := dbs[0].Pool().QueryRow(context.Background(), "SELECT current_schema()").Scan(&schema); err != nil {
		t.Fatal(err)
	}
	bed := x402test.NewEscrowBed(t)
	next := 0
	x402test.KillBetweenHoldAndVerdict(t, bed, "TestEscrowLedger_killedBetweenHoldAndVerdict", []string{escrowChildSchema + "=" + schema}, len(dbs), func() x402.EscrowLedger {
		next++
		return dbs[next-1].Escrow()
	})
}
