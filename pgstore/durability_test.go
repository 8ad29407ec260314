package pgstore_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/vouchkit/vouch/pgstore"
	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/receipt/receipttest"
)

// childSchema names the schema a child writer process uses.
const childSchema = "VOUCH_PGSTORE_CHILD_SCHEMA"

// A server killed with SIGKILL in the middle of a stream of Puts loses no
// receipt whose Put returned: the child process prints each id once Put
// returns, the parent kills it after a while, and every printed id is in
// the database, in the log, and the log extends the last checkpoint the
// writer served.
func TestReceiptStore_killedWriterLosesNothing(t *testing.T) {
	if schema := os.Getenv(childSchema); schema != "" {
		writeUntilKilled(t, schema)
		return
	}
	db := openDB(t)
	schema := ""
	if err := db.Pool().QueryRow(context.Background(), "SELECT current_schema()").Scan(&schema); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestReceiptStore_killedWriterLosesNothing$")
	cmd.Env = append(os.Environ(), childSchema+"="+schema)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var acked []string
	var served string // the last checkpoint the writer served
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		if cp, ok := strings.CutPrefix(sc.Text(), "checkpoint "); ok {
			served = cp
		}
		if id, ok := strings.CutPrefix(sc.Text(), "ack "); ok {
			acked = append(acked, id)
			if len(acked) == 200 {
				cmd.Process.Kill() // SIGKILL
			}
		}
	}
	cmd.Wait()
	if len(acked) < 200 {
		t.Fatalf("the writer acknowledged %d receipts before it ended, want at least 200", len(acked))
	}
	for _, id := range acked {
		if _, err := db.Receipts().Get(context.Background(), id, t0); err != nil {
			t.Errorf("acknowledged receipt %s: %v", id, err)
		}
	}
	l, err := receipt.NewLog(logOrigin, logSigner(), db.Receipts())
	if err != nil {
		t.Fatal(err)
	}
	receipttest.CheckLogRecovered(t, db.Receipts(), l, acked, t0, served)
}

const logOrigin = "example.com/pgstore-durability"

// logSigner signs the checkpoints of the durability test's log.
func logSigner() *receipt.Ed25519Signer {
	s, _ := receipt.NewEd25519Signer(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{5}, ed25519.SeedSize)))
	return s
}

// writeUntilKilled is the child: it stores receipts until it is killed.
func writeUntilKilled(t *testing.T, schema string) {
	db, err := pgstore.Open(context.Background(), databaseURL(t), pgstore.WithSchema(schema))
	if err != nil {
		t.Fatal(err)
	}
	s := db.Receipts()
	l, err := receipt.NewLog(logOrigin, logSigner(), s)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; ; i++ {
		id := fmt.Sprintf("rcpt_%026d", i)
		err := s.Put(context.Background(), receipt.Record{
			ID: id, Data: []byte(`{"receipt_id":"` + id + `"}`), Owner: "key:a",
			Visibility: receipt.VisibilityPrivate, ExpiresAt: t0.Add(time.Hour),
		})
		if err != nil {
			t.Fatal(err)
		}
		fmt.Println("ack", id)
		_, signed, err := l.Checkpoint(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		fmt.Println("checkpoint", base64.StdEncoding.EncodeToString(signed))
	}
}
