package receipt_test

import (
	"bytes"
	"errors"
	"fmt"
	"slices"
	"testing"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/vouchkit/vouch/receipt"
)

// proofLeaves are the leaves of the tree FuzzLogProofs checks proofs
// against.
func proofLeaves() [][]byte {
	var leaves [][]byte
	for i := range 7 {
		leaves = append(leaves, fmt.Appendf(nil, `{"receipt_id":"rcpt_%026d"}`, i))
	}
	return leaves
}

// hashBytes writes proof as the bytes of its hashes, one after another.
func hashBytes(proof []tlog.Hash) []byte {
	var b []byte
	for _, h := range proof {
		b = append(b, h[:]...)
	}
	return b
}

// FuzzLogProofs checks any inclusion and consistency proofs, as a client
// reads them from a log's answers (GET /api/v4/receipt/{id}/proof and GET
// /api/v4/log/consistency), against the checkpoints of a tree of seven
// leaves: a check never panics, refuses with ErrNotInLog or
// ErrInconsistent, and accepts only the proof the tree itself gives, of a
// leaf that is in it at that index, or between two of its sizes, the
// older first. A checkpoint of any size and hash, as a log that lies
// would sign, is refused or accepted without a panic, and one of more
// than 2^62 leaves is refused.
func FuzzLogProofs(f *testing.F) {
	leaves := proofLeaves()
	var stored []tlog.Hash
	read := tlog.HashReaderFunc(func(idx []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(idx))
		for i, x := range idx {
			if x < 0 || x >= int64(len(stored)) {
				return nil, fmt.Errorf("no stored hash %d", x)
			}
			out[i] = stored[x]
		}
		return out, nil
	})
	for i, d := range leaves {
		hs, err := tlog.StoredHashes(int64(i), d, read)
		if err != nil {
			f.Fatal(err)
		}
		stored = append(stored, hs...)
	}
	checkpoint := func(t testing.TB, n int64) receipt.Checkpoint {
		h, err := tlog.TreeHash(n, read)
		if err != nil {
			t.Fatal(err)
		}
		return receipt.Checkpoint{Origin: "example.com/test-log", Size: n, Hash: h}
	}
	n := int64(len(leaves))
	for _, s := range []struct{ older, newer, index int64 }{{3, 7, 2}, {1, 2, 0}, {0, 7, 6}, {4, 4, 3}, {6, 7, 5}} {
		tp, err := tlog.ProveTree(s.newer, s.older, read)
		if err != nil {
			tp = nil // sizes without a proof: the empty tree, or the same size
		}
		rp, err := tlog.ProveRecord(s.newer, s.index, read)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(s.older), uint8(s.newer), uint8(s.index), leaves[s.index], hashBytes(rp), hashBytes(tp), int64(0), []byte(nil))
	}
	f.Add(uint8(7), uint8(3), uint8(7), []byte(`{}`), []byte(nil), []byte(nil), int64(1)<<62, make([]byte, tlog.HashSize))
	f.Add(uint8(2), uint8(2), uint8(0), leaves[0], make([]byte, 2*tlog.HashSize), make([]byte, tlog.HashSize), int64(-1), []byte("x"))
	f.Fuzz(func(t *testing.T, older, newer, index uint8, leaf, inclusion, consistency []byte, otherSize int64, otherHash []byte) {
		split := func(b []byte) []tlog.Hash {
			var hs []tlog.Hash
			for len(b) >= tlog.HashSize && len(hs) < 64 {
				hs = append(hs, tlog.Hash(b[:tlog.HashSize]))
				b = b[tlog.HashSize:]
			}
			return hs
		}
		ip, cp := split(inclusion), split(consistency)
		m, k, i := int64(older)%(n+1), int64(newer)%(n+1), int64(index)%(n+1)
		first, second := checkpoint(t, m), checkpoint(t, k)

		err := receipt.CheckInclusion(leaf, i, ip, second)
		if err != nil && !errors.Is(err, receipt.ErrNotInLog) {
			t.Fatalf("CheckInclusion: %v does not wrap ErrNotInLog", err)
		}
		if err == nil {
			want, perr := tlog.ProveRecord(k, i, read)
			if i >= k || !bytes.Equal(leaf, leaves[i]) || perr != nil || !slices.Equal(ip, want) {
				t.Fatalf("CheckInclusion accepted leaf %q at %d of a tree of %d with proof %x", leaf, i, k, ip)
			}
		}

		err = receipt.CheckConsistency(first, second, cp)
		if err != nil && !errors.Is(err, receipt.ErrInconsistent) {
			t.Fatalf("CheckConsistency: %v does not wrap ErrInconsistent", err)
		}
		if err == nil {
			var want []tlog.Hash
			if m > 0 && m < k {
				if want, err = tlog.ProveTree(k, m, read); err != nil {
					t.Fatal(err)
				}
			}
			if m > k || !slices.Equal(cp, want) {
				t.Fatalf("CheckConsistency accepted %d to %d with proof %x", m, k, cp)
			}
		}

		var h tlog.Hash
		copy(h[:], otherHash)
		other := receipt.Checkpoint{Origin: "example.com/test-log", Size: otherSize, Hash: h}
		huge := otherSize > 1<<62
		if err := receipt.CheckInclusion(leaf, i, ip, other); err != nil && !errors.Is(err, receipt.ErrNotInLog) || err == nil && huge {
			t.Fatalf("CheckInclusion in %+v: %v, want nil or ErrNotInLog", other, err)
		}
		for _, pair := range [][2]receipt.Checkpoint{{first, other}, {other, second}, {other, other}} {
			if err := receipt.CheckConsistency(pair[0], pair[1], cp); err != nil && !errors.Is(err, receipt.ErrInconsistent) || err == nil && huge {
				t.Fatalf("CheckConsistency of %+v and %+v: %v, want nil or ErrInconsistent", pair[0], pair[1], err)
			}
		}
	})
}
