package receipttest

import (
	"context"
	"encoding/base64"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/vouchkit/vouch/receipt"
)

// CheckLog checks the log of s, a store that is a receipt.LogReader,
// which must hold want leaves: the records with ids, read at now, are
// each the leaf at its own LogIndex, no two share one, and each tree
// size's root hash and inclusion proofs computed from the store's stored
// hashes agree with a tree rebuilt from the leaf hashes. It reads the
// whole log, so keep logs small.
func CheckLog(t testing.TB, s receipt.Store, want int64, ids []string, now time.Time) {
	t.Helper()
	ctx := context.Background()
	lr := s.(receipt.LogReader)
	size, err := lr.LogSize(ctx)
	if err != nil || size != want {
		t.Fatalf("LogSize = %d (%v), want %d", size, err, want)
	}
	read := tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) { return lr.ReadLogHashes(ctx, idx) })
	leafHashes := make([]tlog.Hash, size)
	for i := range size {
		h, err := read.ReadHashes([]int64{tlog.StoredHashIndex(0, i)})
		if err != nil {
			t.Fatalf("leaf %d: %v", i, err)
		}
		leafHashes[i] = h[0]
	}
	// The reference: the tree rebuilt from the leaf hashes alone.
	var ref []tlog.Hash
	refRead := tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(idx))
		for i, x := range idx {
			out[i] = ref[x]
		}
		return out, nil
	})
	for n := range size {
		hs, err := tlog.StoredHashesForRecordHash(n, leafHashes[n], refRead)
		if err != nil {
			t.Fatal(err)
		}
		ref = append(ref, hs...)
	}
	for n := int64(1); n <= size; n++ {
		got, err := tlog.TreeHash(n, read)
		wantHash, _ := tlog.TreeHash(n, refRead)
		if err != nil || got != wantHash {
			t.Fatalf("root of size %d = %v (%v), want %v", n, got, err, wantHash)
		}
		for i := range n {
			p, err := tlog.ProveRecord(n, i, read)
			if err != nil {
				t.Fatalf("proof of %d in %d: %v", i, n, err)
			}
			if err := tlog.CheckRecord(p, n, wantHash, i, leafHashes[i]); err != nil {
				t.Fatalf("proof of %d in %d from the store: %v", i, n, err)
			}
		}
	}
	used := map[int64]string{}
	for _, id := range ids {
		rec, err := s.Get(ctx, id, now)
		if err != nil {
			t.Fatalf("Get(%s) = %v", id, err)
		}
		if rec.LogIndex < 0 || rec.LogIndex >= size || tlog.RecordHash(rec.Data) != leafHashes[rec.LogIndex] {
			t.Errorf("record %s: log index %d does not hold its data", rec.ID, rec.LogIndex)
		}
		if other, dup := used[rec.LogIndex]; dup {
			t.Errorf("records %s and %s share leaf %d", other, id, rec.LogIndex)
		}
		used[rec.LogIndex] = id
	}
}

// CheckLogRecovered checks the log of a store reopened after its writer
// was killed: every acknowledged receipt (ids, read at now) has an
// inclusion proof from l to a checkpoint of l, and the log now extends
// served, the base64 of the last signed checkpoint the killed writer
// served, by a consistency proof. An empty served skips that check.
func CheckLogRecovered(t testing.TB, s receipt.Store, l *receipt.Log, ids []string, now time.Time, served string) {
	t.Helper()
	ctx := context.Background()
	cur, signed, err := l.Checkpoint(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := receipt.OpenCheckpoint(signed, l.VerifierKey()); err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		rec, err := s.Get(ctx, id, now)
		if err != nil {
			t.Fatalf("acknowledged receipt %s: %v", id, err)
		}
		// The log may still grow: a statement the killed writer sent
		// can commit after it died.
		proof, cp, _, err := l.InclusionProof(ctx, rec.LogIndex)
		if err != nil || cp.Size < cur.Size {
			t.Fatalf("proof of %s: %v (checkpoint of size %d, want at least %d)", id, err, cp.Size, cur.Size)
		}
		if err := receipt.CheckInclusion(rec.Data, rec.LogIndex, proof, cp); err != nil {
			t.Fatalf("acknowledged receipt %s is not in the log: %v", id, err)
		}
	}
	if served == "" {
		return
	}
	text, err := base64.StdEncoding.DecodeString(served)
	if err != nil {
		t.Fatal(err)
	}
	last, err := receipt.OpenCheckpoint(text, l.VerifierKey())
	if err != nil {
		t.Fatalf("last served checkpoint: %v", err)
	}
	proof, err := l.ConsistencyProof(ctx, last.Size, cur.Size)
	if err != nil {
		t.Fatal(err)
	}
	if err := receipt.CheckConsistency(last, cur, proof); err != nil {
		t.Fatalf("the log now (size %d) does not extend the last checkpoint served (size %d): %v", cur.Size, last.Size, err)
	}
}
