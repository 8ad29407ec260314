package boltstore_test

import (
	"bufio"
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	bolterrors "go.etcd.io/bbolt/errors"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/receipt/boltstore"
	"github.com/vouchkit/vouch/receipt/receipttest"
)

func open(t testing.TB, path string) *boltstore.Store {
	t.Helper()
	s, err := boltstore.Open(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestStore(t *testing.T) {
	receipttest.TestStore(t, func(t *testing.T) receipt.Store {
		s := open(t, filepath.Join(t.TempDir(), "receipts.db"))
		t.Cleanup(func() { s.Close() })
		return s
	})
}

func record(id string, expires time.Time) receipt.Record {
	return receipt.Record{
		ID:             id,
		Data:           []byte(`{"receipt_id":"` + id + `"}`),
		Owner:          "owner-a",
		Visibility:     receipt.VisibilityShared,
		Counterparties: []string{"party-b"},
		ExpiresAt:      expires,
	}
}

func TestStore_reopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "receipts.db")
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	s := open(t, path)
	want := record(receipt.NewID(), now.Add(time.Hour))
	if err := s.Put(context.Background(), want); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Put(context.Background(), record(receipt.NewID(), now.Add(time.Hour))); err == nil {
		t.Error("Put after Close = nil, want an error")
	}
	s = open(t, path)
	defer s.Close()
	got, err := s.Get(context.Background(), want.ID, now)
	if err != nil || string(got.Data) != string(want.Data) || !got.ExpiresAt.Equal(want.ExpiresAt) {
		t.Errorf("after reopen, Get = %+v, %v; want %+v", got, err, want)
	}
}

func TestOpen_locked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "receipts.db")
	s := open(t, path)
	defer s.Close()
	// bbolt locks the file with flock, which a second open in the same
	// process also respects.
	s2, err := boltstore.Open(path, time.Millisecond)
	if err == nil {
		s2.Close()
		t.Fatal("a second Open of a locked file succeeded")
	}
	// The error says why, not bbolt's bare "timeout".
	if !errors.Is(err, bolterrors.ErrTimeout) || !strings.Contains(err.Error(), "still holds it locked") {
		t.Errorf("Open of a locked file = %v, want bbolt's ErrTimeout saying the file is locked", err)
	}
}

func TestOpen_notADatabase(t *testing.T) {
	path := filepath.Join(t.TempDir(), "junk.db")
	if err := os.WriteFile(path, []byte(strings.Repeat("not a bolt file ", 512)), 0o600); err != nil {
		t.Fatal(err)
	}
	if s, err := boltstore.Open(path, 0); err == nil {
		s.Close()
		t.Error("Open(junk) succeeded")
	}
}

// childEnv names the file a child process writes to; it is how the test
// binary, run again by TestStore_durableAfterSIGKILL, knows its role.
const childEnv = "BOLTSTORE_DURABILITY_CHILD"

// TestStore_durableAfterSIGKILL runs a child process that puts receipts
// without end and prints each id once its Put has returned. The parent
// kills it with SIGKILL mid-stream, reopens the file, and expects every
// printed id to be there.
func TestStore_durableAfterSIGKILL(t *testing.T) {
	if path := os.Getenv(childEnv); path != "" {
		writeForever(path)
		return
	}
	path := filepath.Join(t.TempDir(), "receipts.db")
	cmd := exec.Command(os.Args[0], "-test.run=^TestStore_durableAfterSIGKILL$", "-test.count=1")
	cmd.Env = append(os.Environ(), childEnv+"="+path)
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var acked []string
	var served string // the last checkpoint the child served
	lines := bufio.NewScanner(out)
	for lines.Scan() {
		if id, ok := strings.CutPrefix(lines.Text(), "ack "); ok {
			acked = append(acked, id)
		}
		if cp, ok := strings.CutPrefix(lines.Text(), "checkpoint "); ok {
			served = cp
		}
		if len(acked) == 200 {
			break
		}
	}
	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	for lines.Scan() { // ids acknowledged before the signal landed
		if id, ok := strings.CutPrefix(lines.Text(), "ack "); ok {
			acked = append(acked, id)
		}
		if cp, ok := strings.CutPrefix(lines.Text(), "checkpoint "); ok {
			served = cp
		}
	}
	err = cmd.Wait()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || exit.Sys().(syscall.WaitStatus).Signal() != syscall.SIGKILL {
		t.Fatalf("child ended with %v, want death by SIGKILL", err)
	}
	if len(acked) < 200 {
		t.Fatalf("child acknowledged %d receipts before dying, want at least 200", len(acked))
	}

	s := open(t, path)
	defer s.Close()
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	for _, id := range acked {
		rec, err := s.Get(context.Background(), id, now)
		if err != nil || string(rec.Data) != `{"receipt_id":"`+id+`"}` {
			t.Fatalf("acknowledged receipt %s after SIGKILL: %+v, %v", id, rec, err)
		}
	}
	checkLogAfterKill(t, s, acked, served)
	// The file is whole: a full sweep reads and deletes every record.
	n, err := s.DeleteExpired(context.Background(), now.Add(48*time.Hour))
	if err != nil || n < len(acked) {
		t.Errorf("DeleteExpired after reopen = %d, %v; want at least %d", n, err, len(acked))
	}
	t.Logf("%d receipts acknowledged, all present and in the log after SIGKILL", len(acked))
}

// logSigner signs the checkpoints of the durability tests' logs.
func logSigner() *receipt.Ed25519Signer {
	s, _ := receipt.NewEd25519Signer(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{5}, ed25519.SeedSize)))
	return s
}

const logOrigin = "example.com/boltstore-durability"

func checkLogAfterKill(t *testing.T, s *boltstore.Store, acked []string, served string) {
	t.Helper()
	l, err := receipt.NewLog(logOrigin, logSigner(), s)
	if err != nil {
		t.Fatal(err)
	}
	receipttest.CheckLogRecovered(t, s, l, acked, time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC), served)
}

// writeForever is the child's work: it never returns normally.
func writeForever(path string) {
	s, err := boltstore.Open(path, 0)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	l, err := receipt.NewLog(logOrigin, logSigner(), s)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	expires := time.Date(2026, 5, 2, 12, 0, 0, 0, time.UTC)
	for {
		id := receipt.NewID()
		if err := s.Put(context.Background(), record(id, expires)); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		fmt.Printf("ack %s\n", id) // unbuffered: written before the next Put
		_, signed, err := l.Checkpoint(context.Background())
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(2)
		}
		fmt.Printf("checkpoint %s\n", base64.StdEncoding.EncodeToString(signed))
	}
}

// BenchmarkStore measures Put (one fsync'd transaction each) and Get of a
// 1 KiB record in a file under the test's temporary directory.
func BenchmarkStore(b *testing.B) {
	s := open(b, filepath.Join(b.TempDir(), "receipts.db"))
	defer s.Close()
	receipttest.BenchmarkStore(b, s)
}

// BenchmarkIssueLog compares receipt issuance on the bbolt store with and
// without the transparency log (see receipttest.BenchmarkIssueLog).
func BenchmarkIssueLog(b *testing.B) {
	s := open(b, filepath.Join(b.TempDir(), "receipts.db"))
	defer s.Close()
	receipttest.BenchmarkIssueLog(b, s, s.PutUnlogged)
}

// Every method of a closed store fails with an error that names the
// store and what it was doing, not bbolt's bare "database not open".
func TestStore_closed(t *testing.T) {
	s := open(t, filepath.Join(t.TempDir(), "receipts.db"))
	now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
	rec := record("rcpt_closed", now.Add(time.Hour))
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	_, getErr := s.Get(ctx, rec.ID, now)
	_, sweepErr := s.DeleteExpired(ctx, now)
	_, sizeErr := s.LogSize(ctx)
	_, hashErr := s.ReadLogHashes(ctx, []int64{0})
	for name, err := range map[string]error{
		"Put": s.Put(ctx, rec), "Get": getErr, "DeleteExpired": sweepErr,
		"LogSize": sizeErr, "ReadLogHashes": hashErr,
	} {
		if err == nil || !strings.HasPrefix(err.Error(), "boltstore: ") || errors.Is(err, receipt.ErrNotFound) {
			t.Errorf("%s on a closed store = %v, want an error starting \"boltstore: \"", name, err)
		}
	}
}
