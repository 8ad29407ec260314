package boltstore_test

import (
	"bufio"
	"context"
	"errors"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
)

// TestStore_durableAfterRepeatedSIGKILL kills a process writing receipts
// to one file with SIGKILL 20 times in a row, each at a moment drawn from
// a seeded sequence (from before its first write to well into its
// writes). After each kill the file must open, hold every receipt any
// process acknowledged so far, and the next process appends to it.
func TestStore_durableAfterRepeatedSIGKILL(t *testing.T) {
	if path := os.Getenv(childEnv); path != "" {
		writeForever(path)
		return
	}
	const rounds = 20
	rng := rand.New(rand.NewPCG(2026, 20))
	path := filepath.Join(t.TempDir(), "receipts.db")
	var acked []string
	var served string // the last checkpoint any process served
	deadline := time.Now().Add(50 * time.Second)
	for round := range rounds {
		if time.Now().After(deadline) {
			t.Fatalf("round %d: out of time", round)
		}
		// Wait for 0 to 40 acknowledgements, then up to 20ms more.
		waitAcks := rng.IntN(41)
		extra := time.Duration(rng.IntN(20_000)) * time.Microsecond

		cmd := exec.Command(os.Args[0], "-test.run=^TestStore_durableAfterRepeatedSIGKILL$", "-test.count=1")
		cmd.Env = append(os.Environ(), childEnv+"="+path)
		out, err := cmd.StdoutPipe()
		if err != nil {
			t.Fatal(err)
		}
		cmd.Stderr = os.Stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		lines := bufio.NewScanner(out)
		got := 0
		for got < waitAcks && lines.Scan() {
			if id, ok := strings.CutPrefix(lines.Text(), "ack "); ok {
				acked = append(acked, id)
				got++
			}
			if cp, ok := strings.CutPrefix(lines.Text(), "checkpoint "); ok {
				served = cp
			}
		}
		time.Sleep(extra)
		if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		for lines.Scan() { // acknowledged before the signal landed
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
			t.Fatalf("round %d: child ended with %v, want death by SIGKILL", round, err)
		}

		s := open(t, path)
		now := time.Date(2026, 5, 1, 12, 0, 0, 0, time.UTC)
		for _, id := range acked {
			rec, err := s.Get(context.Background(), id, now)
			if err != nil || string(rec.Data) != `{"receipt_id":"`+id+`"}` {
				s.Close()
				t.Fatalf("round %d (killed after %d acks + %v): acknowledged receipt %s: %+v, %v",
					round, waitAcks, extra, id, rec, err)
			}
		}
		checkLogAfterKill(t, s, acked, served)
		if err := s.Close(); err != nil {
			t.Fatalf("round %d: closing: %v", round, err)
		}
	}
	if len(acked) < rounds {
		t.Errorf("only %d receipts acknowledged over %d rounds; the kills came too early to test much", len(acked), rounds)
	}
	t.Logf("%d rounds, %d receipts acknowledged, all present and in the log after every SIGKILL", rounds, len(acked))
}
