package receipt_test

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/vouchkit/vouch/receipt"
)

// The reference tree of RFC 9162, section 2.1, written from its
// recursive definitions: MTH, PATH (inclusion) and PROOF (consistency).

func leafHash(d []byte) tlog.Hash { return sha256.Sum256(append([]byte{0}, d...)) }

func nodeHash(l, r tlog.Hash) tlog.Hash {
	return sha256.Sum256(append(append([]byte{1}, l[:]...), r[:]...))
}

// split is the largest power of two smaller than n.
func split(n int) int {
	k := 1
	for k<<1 < n {
		k <<= 1
	}
	return k
}

func mth(d [][]byte) tlog.Hash {
	switch len(d) {
	case 0:
		return sha256.Sum256(nil)
	case 1:
		return leafHash(d[0])
	}
	k := split(len(d))
	return nodeHash(mth(d[:k]), mth(d[k:]))
}

func path(m int, d [][]byte) []tlog.Hash {
	if len(d) <= 1 {
		return nil
	}
	k := split(len(d))
	if m < k {
		return append(path(m, d[:k]), mth(d[k:]))
	}
	return append(path(m-k, d[k:]), mth(d[:k]))
}

func subproof(m int, d [][]byte, b bool) []tlog.Hash {
	n := len(d)
	if m == n {
		if b {
			return nil
		}
		return []tlog.Hash{mth(d)}
	}
	k := split(n)
	if m <= k {
		return append(subproof(m, d[:k], b), mth(d[k:]))
	}
	return append(subproof(m-k, d[k:], false), mth(d[:k]))
}

// ctLeaves are the leaves of Certificate Transparency's test tree, whose
// roots are published with it (RFC 6962's reference implementation).
var ctLeaves = []string{"", "00", "10", "2021", "3031", "40414243", "5051525354555657", "606162636465666768696a6b6c6d6e6f"}

var ctRoots = []string{
	"6e340b9cffb37a989ca544e6bb780a2c78901d3fb33738768511a30617afa01d",
	"fac54203e7cc696cf0dfcb42c92a1d9dbaf70ad9e621f4bd8d98662f00e3c125",
	"aeb6bcfe274b70a14fb067a5e5578264db0fa9b51af5e0ba159158f329e06e77",
	"d37ee418976dd95753c1c73862b9398fa2a2cf9b4ff0fdfe8b30cd95209614b7",
	"4e3bbb1f7b478dcfe71fb631631519a3bca12c9aefca1612bfce4c13a86264d4",
	"76e67dadbcdf1e10e1b74ddc608abd2f98dfb16fbce75277b5232a127f2087ef",
	"ddb89be403809e325750d3d263cd78929c2942b7942a34b77e122c9594a74c8c",
	"5dc9da79a70659a9ad559cb701ded9a2ab9d823aad2f4960cfe370eff4604328",
}

// newTestLog returns a log on a MemStore holding the given leaves, put as
// records of their own.
func newTestLog(t testing.TB, seed byte, leaves [][]byte) (*receipt.Log, *receipt.MemStore) {
	t.Helper()
	store := &receipt.MemStore{}
	for i, d := range leaves {
		rec := receipt.Record{ID: fmt.Sprintf("rcpt_%026d", i), Data: d, Owner: "o", ExpiresAt: t0().Add(time.Hour)}
		if err := store.Put(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
	}
	l, err := receipt.NewLog("example.com/test-log", newSigner(t, seed), store)
	if err != nil {
		t.Fatal(err)
	}
	return l, store
}

func TestLog_ctVectors(t *testing.T) {
	// Records need data, so check the vectors on tlog's hashing directly,
	// through LogAppend as the stores use it, and the reference.
	var stored []tlog.Hash
	read := func(idx []int64) ([]tlog.Hash, error) {
		out := make([]tlog.Hash, len(idx))
		for i, x := range idx {
			out[i] = stored[x]
		}
		return out, nil
	}
	var leaves [][]byte
	for n, hx := range ctLeaves {
		d, _ := hex.DecodeString(hx)
		leaves = append(leaves, d)
		first, hs, err := receipt.LogAppend(int64(n), d, read)
		if err != nil || first != int64(len(stored)) {
			t.Fatalf("LogAppend(%d) = %d, %v", n, first, err)
		}
		stored = append(stored, hs...)
		got, err := tlog.TreeHash(int64(n+1), tlog.HashReaderFunc(read))
		if err != nil {
			t.Fatal(err)
		}
		if hex.EncodeToString(got[:]) != ctRoots[n] {
			t.Errorf("root of %d leaves = %x, want %s", n+1, got, ctRoots[n])
		}
		if ref := mth(leaves); ref != got {
			t.Errorf("root of %d leaves = %x, reference %x", n+1, got, ref)
		}
	}
}

// TestLog_proofs checks the Log's checkpoints, inclusion proofs and
// consistency proofs against the reference for trees of 1, 2, 3, 7, 8, 9
// and 16 leaves, and that they check offline.
func TestLog_proofs(t *testing.T) {
	ctx := context.Background()
	var all [][]byte
	for i := range 16 {
		all = append(all, []byte(fmt.Sprintf(`{"leaf":%d}`, i)))
	}
	for _, size := range []int{1, 2, 3, 7, 8, 9, 16} {
		leaves := all[:size]
		l, _ := newTestLog(t, 1, leaves)
		cp, signed, err := l.Checkpoint(ctx)
		if err != nil {
			t.Fatal(err)
		}
		want := receipt.Checkpoint{Origin: "example.com/test-log", Size: int64(size), Hash: mth(leaves)}
		if cp != want {
			t.Fatalf("size %d: checkpoint %+v, want %+v", size, cp, want)
		}
		if !strings.HasPrefix(string(signed), want.String()+"\n\u2014 example.com/test-log ") {
			t.Errorf("size %d: signed note %q does not start with the body and a signature line", size, signed)
		}
		opened, err := receipt.OpenCheckpoint(signed, l.VerifierKey())
		if err != nil || opened != want {
			t.Fatalf("size %d: OpenCheckpoint = %+v, %v", size, opened, err)
		}
		for i := range size {
			proof, pcp, _, err := l.InclusionProof(ctx, int64(i))
			if err != nil || pcp != want {
				t.Fatalf("size %d: InclusionProof(%d) = %v (%+v)", size, i, err, pcp)
			}
			if ref := path(i, leaves); !equalHashes(proof, ref) {
				t.Errorf("size %d: inclusion proof of %d = %x, reference %x", size, i, proof, ref)
			}
			if err := receipt.CheckInclusion(leaves[i], int64(i), proof, cp); err != nil {
				t.Errorf("size %d: CheckInclusion(%d) = %v", size, i, err)
			}
		}
		for m := 1; m <= size; m++ {
			proof, err := l.ConsistencyProof(ctx, int64(m), int64(size))
			if err != nil {
				t.Fatal(err)
			}
			if ref := subproof(m, leaves, true); !equalHashes(proof, ref) {
				t.Errorf("consistency %d->%d = %x, reference %x", m, size, proof, ref)
			}
			older := receipt.Checkpoint{Origin: cp.Origin, Size: int64(m), Hash: mth(leaves[:m])}
			if err := receipt.CheckConsistency(older, cp, proof); err != nil {
				t.Errorf("CheckConsistency(%d->%d) = %v", m, size, err)
			}
		}
	}
}

func equalHashes(a, b []tlog.Hash) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

// TestLog_tamper changes each part of what a verifier is given and
// expects the check to fail with the package's sentinel.
func TestLog_tamper(t *testing.T) {
	ctx := context.Background()
	var leaves [][]byte
	for i := range 9 {
		leaves = append(leaves, []byte(fmt.Sprintf(`{"leaf":%d}`, i)))
	}
	l, store := newTestLog(t, 1, leaves)
	proof, cp, signed, err := l.InclusionProof(ctx, 5)
	if err != nil {
		t.Fatal(err)
	}
	if err := receipt.CheckInclusion(leaves[5], 5, proof, cp); err != nil {
		t.Fatal(err)
	}

	t.Run("changed receipt", func(t *testing.T) {
		changed := bytes.Replace(leaves[5], []byte("5"), []byte("6"), 1)
		if err := receipt.CheckInclusion(changed, 5, proof, cp); !errors.Is(err, receipt.ErrNotInLog) {
			t.Errorf("CheckInclusion(changed) = %v, want ErrNotInLog", err)
		}
		if err := receipt.CheckInclusion(leaves[5], 4, proof, cp); !errors.Is(err, receipt.ErrNotInLog) {
			t.Errorf("CheckInclusion(other index) = %v, want ErrNotInLog", err)
		}
	})
	t.Run("changed proof", func(t *testing.T) {
		for i := range proof {
			bad := append(tlog.RecordProof(nil), proof...)
			bad[i][0] ^= 1
			if err := receipt.CheckInclusion(leaves[5], 5, bad, cp); !errors.Is(err, receipt.ErrNotInLog) {
				t.Errorf("CheckInclusion(proof hash %d flipped) = %v, want ErrNotInLog", i, err)
			}
		}
		if err := receipt.CheckInclusion(leaves[5], 5, proof[:len(proof)-1], cp); !errors.Is(err, receipt.ErrNotInLog) {
			t.Errorf("CheckInclusion(proof cut short) = %v, want ErrNotInLog", err)
		}
	})
	t.Run("checkpoint signed by another key", func(t *testing.T) {
		other, _ := newTestLog(t, 2, leaves)
		_, forged, err := other.Checkpoint(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := receipt.OpenCheckpoint(forged, l.VerifierKey()); !errors.Is(err, receipt.ErrCheckpoint) {
			t.Errorf("OpenCheckpoint(signed by another key) = %v, want ErrCheckpoint", err)
		}
		edited := bytes.Replace(signed, []byte("\n9\n"), []byte("\n10\n"), 1)
		if _, err := receipt.OpenCheckpoint(edited, l.VerifierKey()); !errors.Is(err, receipt.ErrCheckpoint) {
			t.Errorf("OpenCheckpoint(size edited) = %v, want ErrCheckpoint", err)
		}
	})
	t.Run("shrunk tree", func(t *testing.T) {
		small := receipt.Checkpoint{Origin: cp.Origin, Size: 7, Hash: mth(leaves[:7])}
		p, err := l.ConsistencyProof(ctx, 7, 9)
		if err != nil {
			t.Fatal(err)
		}
		if err := receipt.CheckConsistency(cp, small, p); !errors.Is(err, receipt.ErrInconsistent) {
			t.Errorf("CheckConsistency(9 -> 7) = %v, want ErrInconsistent", err)
		}
		// A log rewritten at leaf 3 and grown: its proof does not
		// connect the old checkpoint.
		rewritten := append([][]byte{}, leaves...)
		rewritten[3] = []byte(`{"leaf":"rewritten"}`)
		rewritten = append(rewritten, []byte(`{"leaf":9}`))
		fork, _ := newTestLog(t, 1, rewritten)
		fcp, _, err := fork.Checkpoint(ctx)
		if err != nil {
			t.Fatal(err)
		}
		fp, err := fork.ConsistencyProof(ctx, 9, 10)
		if err != nil {
			t.Fatal(err)
		}
		if err := receipt.CheckConsistency(cp, fcp, fp); !errors.Is(err, receipt.ErrInconsistent) {
			t.Errorf("CheckConsistency(to a rewritten log) = %v, want ErrInconsistent", err)
		}
		same := receipt.Checkpoint{Origin: cp.Origin, Size: cp.Size, Hash: mth(rewritten[:9])}
		if err := receipt.CheckConsistency(cp, same, nil); !errors.Is(err, receipt.ErrInconsistent) {
			t.Errorf("CheckConsistency(two roots of one size) = %v, want ErrInconsistent", err)
		}
	})
	t.Run("proof requests out of range", func(t *testing.T) {
		var re *receipt.RangeError
		for _, c := range [][2]int64{{-1, 3}, {4, 3}, {1, 10}} {
			if _, err := l.ConsistencyProof(ctx, c[0], c[1]); !errors.As(err, &re) {
				t.Errorf("ConsistencyProof(%d, %d) = %v, want a RangeError", c[0], c[1], err)
			}
		}
		if _, _, _, err := l.InclusionProof(ctx, 9); !errors.Is(err, receipt.ErrNotInLog) {
			t.Errorf("InclusionProof(9 of 9) = %v, want ErrNotInLog", err)
		}
	})
	if n, _ := store.LogSize(ctx); n != 9 {
		t.Errorf("LogSize = %d, want 9", n)
	}
}

func TestParseCheckpoint(t *testing.T) {
	good := "example.com/log\n12\n" + strings.Repeat("A", 43) + "=\n"
	cp, err := receipt.ParseCheckpoint(good + "extension line\n")
	if err != nil || cp.Origin != "example.com/log" || cp.Size != 12 || cp.String() != good {
		t.Errorf("ParseCheckpoint = %+v, %v", cp, err)
	}
	for _, bad := range []string{
		"", "example.com/log\n12\n", "example.com/log\n12\nAAAA\n", "\n12\n" + strings.Repeat("A", 43) + "=\n",
		"example.com/log\n012\n" + strings.Repeat("A", 43) + "=\n", "example.com/log\n-1\n" + strings.Repeat("A", 43) + "=\n",
		"example.com/log\n12\n" + strings.Repeat("A", 43) + "=", "example.com/log\n+12\n" + strings.Repeat("A", 43) + "=\n",
	} {
		if _, err := receipt.ParseCheckpoint(bad); err == nil {
			t.Errorf("ParseCheckpoint(%q) succeeded", bad)
		}
	}
}

func FuzzOpenCheckpoint(f *testing.F) {
	l, _ := newTestLog(f, 1, [][]byte{[]byte(`{"a":1}`), []byte(`{"b":2}`)})
	_, signed, err := l.Checkpoint(context.Background())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(signed)
	f.Add([]byte("example.com/test-log\n2\nAAAA\n\n\u2014 example.com/test-log AAAA\n"))
	f.Fuzz(func(t *testing.T, text []byte) {
		cp, err := receipt.OpenCheckpoint(text, l.VerifierKey())
		if err != nil {
			if _, perr := receipt.ParseCheckpoint(string(text)); perr == nil && !errors.Is(err, receipt.ErrCheckpoint) {
				t.Fatalf("OpenCheckpoint error %v does not wrap ErrCheckpoint", err)
			}
			return
		}
		// Only the log's own checkpoints open.
		if cp.Origin != "example.com/test-log" {
			t.Fatalf("opened a checkpoint of %q", cp.Origin)
		}
	})
}

// TestNewLog_badOrigin: an origin that cannot name a note key (empty,
// with white space or a '+') is refused by NewLog and LogVerifierKey with
// the rule it breaks, not as a malformed key found later.
func TestNewLog_badOrigin(t *testing.T) {
	signer := newSigner(t, 1)
	for _, origin := range []string{"", "example.com/vouch receipts", "example.com/a+b", "tab\there", "bad\xffutf8"} {
		_, err := receipt.LogVerifierKey(origin, signer.Public())
		if err == nil || !strings.Contains(err.Error(), "white space") {
			t.Errorf("LogVerifierKey(%q) = %v, want an error saying what an origin may hold", origin, err)
		}
		_, err = receipt.NewLog(origin, signer, &receipt.MemStore{})
		if err == nil || !strings.Contains(err.Error(), "white space") {
			t.Errorf("NewLog(%q) = %v, want an error saying what an origin may hold", origin, err)
		}
	}
}

// TestOpenCheckpoint_keyGivenTwice: a key given twice is one key, so a
// checkpoint it signed opens, where it failed as signed by an ambiguous
// pair of keys.
func TestOpenCheckpoint_keyGivenTwice(t *testing.T) {
	l, _ := newTestLog(t, 1, [][]byte{[]byte(`{"leaf":0}`)})
	_, signed, err := l.Checkpoint(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if _, err := receipt.OpenCheckpoint(signed, l.VerifierKey(), l.VerifierKey()); err != nil {
		t.Errorf("OpenCheckpoint(signed, key, the same key) = %v, want the checkpoint", err)
	}
}

// TestCheckConsistency_emptyTreeRoot: a checkpoint of the empty tree
// holds its root, SHA-256 of nothing (RFC 9162), as Log.Checkpoint signs
// it; one of size 0 with another root is consistent with no later tree,
// nor with itself.
func TestCheckConsistency_emptyTreeRoot(t *testing.T) {
	empty, _, err := mustLogCheckpoint(t, nil)
	if err != nil {
		t.Fatal(err)
	}
	if want := tlog.Hash(sha256.Sum256(nil)); empty.Hash != want {
		t.Fatalf("root of the empty log %x, want SHA-256() %x", empty.Hash, want)
	}
	later, _, err := mustLogCheckpoint(t, [][]byte{[]byte(`{"leaf":0}`)})
	if err != nil {
		t.Fatal(err)
	}
	if err := receipt.CheckConsistency(empty, later, nil); err != nil {
		t.Errorf("CheckConsistency(the empty tree, size 1) = %v, want nil", err)
	}
	bogus := receipt.Checkpoint{Origin: later.Origin, Size: 0, Hash: tlog.Hash{1, 2, 3}}
	if err := receipt.CheckConsistency(bogus, later, nil); !errors.Is(err, receipt.ErrInconsistent) {
		t.Errorf("CheckConsistency(size 0 of root %x, size 1) = %v, want ErrInconsistent", bogus.Hash, err)
	}
	if err := receipt.CheckConsistency(bogus, bogus, nil); !errors.Is(err, receipt.ErrInconsistent) {
		t.Errorf("CheckConsistency(size 0 of root %x, the same) = %v, want ErrInconsistent", bogus.Hash, err)
	}
	if err := receipt.CheckConsistency(empty, empty, nil); err != nil {
		t.Errorf("CheckConsistency(the empty tree, the same) = %v, want nil", err)
	}
}

// mustLogCheckpoint returns the checkpoint of a test log of leaves.
func mustLogCheckpoint(t *testing.T, leaves [][]byte) (receipt.Checkpoint, []byte, error) {
	t.Helper()
	l, _ := newTestLog(t, 1, leaves)
	return l.Checkpoint(context.Background())
}
