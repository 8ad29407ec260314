package fairstore

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

var t0 = time.Date(2026, 12, 2, 0, 0, 0, 0, time.UTC)

// keys returns the keys held at now, sorted.
func (s *Store[V]) keys(now time.Time) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var ks []string
	for k, it := range s.held {
		if !expired(it.Until, now) {
			ks = append(ks, k)
		}
	}
	slices.Sort(ks)
	return ks
}

// put puts an entry of owner under key, of size bytes, expiring after
// minutes, at t0.
func put(s *Store[int], owner, key string, size int64, minutes int, maxEntries int, maxBytes int64) bool {
	return s.Put(t0, Entry[int]{Key: key, Owner: owner, Until: t0.Add(time.Duration(minutes) * time.Minute), Size: size}, maxEntries, maxBytes)
}

func seq(owner string, from, to int) []string {
	var ks []string
	for i := from; i < to; i++ {
		ks = append(ks, fmt.Sprintf("%s%d", owner, i))
	}
	return ks
}

// TestStore_heavyOwnerPushesOutItsOwn: an owner that keeps putting
// entries into a full store drops its own, the one expiring first, while
// it holds more than the others; the others keep theirs.
func TestStore_heavyOwnerPushesOutItsOwn(t *testing.T) {
	var s Store[int]
	for i := range 3 {
		put(&s, "bob", fmt.Sprint("bob", i), 10, 60, 8, 1<<20)
	}
	for i := range 20 {
		if !put(&s, "eve", fmt.Sprint("eve", i), 10, 60+i, 8, 1<<20) {
			t.Fatalf("Put(eve%d) = false; want true", i)
		}
	}
	want := append(seq("bob", 0, 3), seq("eve", 15, 20)...)
	slices.Sort(want)
	if diff := cmp.Diff(want, s.keys(t0)); diff != "" {
		t.Errorf("held (-want +got):\n%s", diff)
	}
}

// TestStore_bytesFromTheHeaviest: over its bytes, the store drops from
// the owner holding the most bytes, not the most entries; an owner that
// holds nothing gets room for its entry from the owner holding the most;
// an entry over the bound alone is not held.
func TestStore_bytesFromTheHeaviest(t *testing.T) {
	var s Store[int]
	for i := range 6 {
		put(&s, "bob", fmt.Sprint("bob", i), 5, 60+i, 100, 100)
	}
	put(&s, "eve", "eve0", 30, 60, 100, 100)
	put(&s, "eve", "eve1", 30, 61, 100, 100)
	if !put(&s, "bob", "bob6", 15, 66, 100, 100) {
		t.Fatal("Put(bob6, 15 bytes) = false; want true")
	}
	want := append(seq("bob", 0, 7), "eve1")
	if diff := cmp.Diff(want, s.keys(t0)); diff != "" {
		t.Errorf("held after bob's 7th entry, 45 bytes against eve's 60 (-want +got):\n%s", diff)
	}
	if !put(&s, "mal", "mal0", 40, 60, 100, 100) {
		t.Fatal("Put(mal0, 40 bytes) by an owner holding nothing = false; want true")
	}
	want = append(seq("bob", 3, 7), "eve1", "mal0")
	if diff := cmp.Diff(want, s.keys(t0)); diff != "" || s.Bytes() != 100 {
		t.Errorf("held after a first entry of another owner, taken from bob's 45 bytes (-want +got):\n%s; Bytes %d", diff, s.Bytes())
	}
	if put(&s, "bob", "huge", 101, 60, 100, 100) {
		t.Error("Put of 101 bytes in 100 = true; want false")
	}
}

// TestStore_expiryAndReplace: an entry is not got at or after its time,
// expired entries make room before any live one is dropped, and a Put
// under a key held replaces it.
func TestStore_expiryAndReplace(t *testing.T) {
	var s Store[int]
	s.Put(t0, Entry[int]{Key: "a", Owner: "bob", Value: 1, Until: t0.Add(time.Minute), Size: 1}, 2, 100)
	s.Put(t0, Entry[int]{Key: "b", Owner: "eve", Value: 2, Until: t0.Add(time.Hour), Size: 1}, 2, 100)
	if v, ok := s.Get("a", t0.Add(time.Minute-1)); !ok || v != 1 {
		t.Errorf("Get(a) before its time = %d, %v; want 1, true", v, ok)
	}
	if _, ok := s.Get("a", t0.Add(time.Minute)); ok {
		t.Error("Get(a) at its time = true; want false")
	}
	later := t0.Add(2 * time.Minute)
	if !s.Put(later, Entry[int]{Key: "c", Owner: "eve", Value: 3, Until: later.Add(time.Hour), Size: 1}, 2, 100) {
		t.Fatal("Put(c) = false; want true")
	}
	if diff := cmp.Diff([]string{"b", "c"}, s.keys(later)); diff != "" || s.Len() != 2 {
		t.Errorf("held after the expired a made room (-want +got):\n%s; Len %d", diff, s.Len())
	}
	s.Put(later, Entry[int]{Key: "c", Owner: "eve", Value: 4, Until: later.Add(time.Hour), Size: 5}, 2, 100)
	if v, _ := s.Get("c", later); v != 4 || s.Len() != 2 || s.Bytes() != 6 {
		t.Errorf("after replacing c: Get(c) = %d, Len %d, Bytes %d; want 4, 2, 6", v, s.Len(), s.Bytes())
	}
}

// TestStore_never: an entry held until the zero time never expires, and
// room is made from the entries that do expire before it, then from the
// ones that never do, the first put first.
func TestStore_never(t *testing.T) {
	var s Store[int]
	s.Put(t0, Entry[int]{Key: "n1", Owner: "bob", Value: 1, Size: 1}, 3, 100)
	s.Put(t0, Entry[int]{Key: "h", Owner: "bob", Value: 2, Until: t0.Add(time.Hour), Size: 1}, 3, 100)
	s.Put(t0, Entry[int]{Key: "n2", Owner: "bob", Value: 3, Size: 1}, 3, 100)
	far := t0.Add(100 * 365 * 24 * time.Hour)
	if v, ok := s.Get("n1", far); !ok || v != 1 {
		t.Errorf("Get(n1) a century on = %d, %v; want 1, true", v, ok)
	}
	s.Put(t0, Entry[int]{Key: "n3", Owner: "bob", Value: 4, Size: 1}, 3, 100)
	if diff := cmp.Diff([]string{"n1", "n2", "n3"}, s.keys(t0)); diff != "" {
		t.Errorf("held after a Put into the full store (-want +got):\n%s", diff)
	}
	s.Put(t0, Entry[int]{Key: "n4", Owner: "bob", Value: 5, Size: 1}, 3, 100)
	if diff := cmp.Diff([]string{"n2", "n3", "n4"}, s.keys(far)); diff != "" {
		t.Errorf("held after another (-want +got):\n%s", diff)
	}
	if n := s.DropExpired(far); n != 0 || s.Len() != 3 {
		t.Errorf("DropExpired a century on dropped %d, holding %d; want 0, 3", n, s.Len())
	}
}

// TestStore_fairShare puts entries of one size for random owners into a
// small store and checks, after every Put, the bounds, the counts, and
// that an owner lost an entry only to a Put of an owner holding, after
// it, at most one entry more than the loser.
func TestStore_fairShare(t *testing.T) {
	const maxEntries, size = 12, 10
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 1))
		var s Store[int]
		held := map[string]Entry[int]{}
		for i := range 400 {
			e := Entry[int]{Key: fmt.Sprint(i), Owner: fmt.Sprint("o", r.IntN(2+int(seed)%9)), Until: t0.Add(time.Duration(1+r.IntN(60)) * time.Minute), Size: size}
			ok := s.Put(t0, e, maxEntries, maxEntries*size)
			if ok {
				held[e.Key] = e
			}
			count, losers := map[string]int{}, []string{}
			for k, h := range held {
				if _, still := s.Get(k, t0); !still {
					delete(held, k)
					if h.Owner != e.Owner {
						losers = append(losers, h.Owner)
					}
					continue
				}
				count[h.Owner]++
			}
			for _, loser := range losers {
				if count[e.Owner] > count[loser]+1 {
					t.Errorf("seed %d, put %d: %s lost an entry to %s, which then holds %d against its %d", seed, i, loser, e.Owner, count[e.Owner], count[loser])
				}
			}
			if s.Len() != len(held) || s.Len() > maxEntries || s.Bytes() != int64(len(held))*size {
				t.Fatalf("seed %d, put %d: Len %d, Bytes %d; want %d entries within %d", seed, i, s.Len(), s.Bytes(), len(held), maxEntries)
			}
		}
	}
}

// TestStore_boundsAndCounts puts entries of random sizes, owners and
// times, some under keys held and some after others expired, and checks
// after every Put that the store holds the entry and exactly the entries
// it reports, within its bounds.
func TestStore_boundsAndCounts(t *testing.T) {
	const maxEntries, maxBytes = 20, 400
	for seed := range uint64(20) {
		r := rand.New(rand.NewPCG(seed, 2))
		var s Store[int]
		held := map[string]Entry[int]{}
		now := t0
		for i := range 1000 {
			now = now.Add(time.Duration(r.IntN(3)) * time.Second)
			e := Entry[int]{Key: fmt.Sprint(r.IntN(60)), Owner: fmt.Sprint("o", r.IntN(6)), Value: i, Until: now.Add(time.Duration(1+r.IntN(90)) * time.Second), Size: int64(1 + r.IntN(80))}
			if !s.Put(now, e, maxEntries, maxBytes) {
				t.Fatalf("seed %d, put %d: Put of %d bytes = false; want true", seed, i, e.Size)
			}
			held[e.Key] = e
			var bytes int64
			for k, h := range held {
				v, ok := s.Get(k, now)
				if !ok {
					delete(held, k)
					continue
				}
				if v != h.Value {
					t.Fatalf("seed %d, put %d: Get(%s) = %d, want %d", seed, i, k, v, h.Value)
				}
				bytes += h.Size
			}
			if s.Len() != len(held) || s.Bytes() != bytes || s.Len() > maxEntries || bytes > maxBytes {
				t.Fatalf("seed %d, put %d: Len %d, Bytes %d; want %d entries of %d bytes within %d and %d", seed, i, s.Len(), s.Bytes(), len(held), bytes, maxEntries, maxBytes)
			}
		}
	}
}

// BenchmarkStore_putFull puts into a full store of 10,000 entries held
// by one owner or by 10,000 owners: each Put drops one entry.
func BenchmarkStore_putFull(b *testing.B) {
	const n = 10_000
	for _, owners := range []int{1, n} {
		b.Run(fmt.Sprint("owners=", owners), func(b *testing.B) {
			var s Store[int]
			until := t0.Add(time.Hour)
			for i := range n {
				s.Put(t0, Entry[int]{Key: fmt.Sprint(i), Owner: fmt.Sprint(i % owners), Until: until, Size: 100}, n, 1<<30)
			}
			keys := make([]string, b.N)
			for i := range keys {
				keys[i] = fmt.Sprint("k", i)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for i := range b.N {
				s.Put(t0, Entry[int]{Key: keys[i], Owner: fmt.Sprint(i % owners), Until: until, Size: 100}, n, 1<<30)
			}
		})
	}
}

// TestStore_swap: Swap replaces a held value in place, so that the entry
// keeps its turn to be dropped, and holds nothing new under a key held
// by none.
func TestStore_swap(t *testing.T) {
	var s Store[int]
	s.Put(t0, Entry[int]{Key: "a", Owner: "bob", Value: 1, Size: 1}, 2, 100)
	s.Put(t0, Entry[int]{Key: "b", Owner: "bob", Value: 2, Size: 1}, 2, 100)
	if !s.Swap("a", 3) || s.Swap("z", 4) {
		t.Error("Swap(a) = false or Swap(z) = true; want true, false")
	}
	s.Put(t0, Entry[int]{Key: "c", Owner: "bob", Value: 5, Size: 1}, 2, 100)
	if diff := cmp.Diff([]string{"b", "c"}, s.keys(t0)); diff != "" {
		t.Errorf("held after a Put into the full store (-want +got):\n%s", diff)
	}
	if v, ok := s.Get("b", t0); !ok || v != 2 {
		t.Errorf("Get(b) = %d, %v; want 2, true", v, ok)
	}
	s.Swap("b", 6)
	if v, _ := s.Get("b", t0); v != 6 || s.Len() != 2 || s.Bytes() != 2 {
		t.Errorf("after Swap(b): Get(b) = %d, Len %d, Bytes %d; want 6, 2, 2", v, s.Len(), s.Bytes())
	}
}

// TestKey: keys of two owners whose owner and name run together into one
// text differ.
func TestKey(t *testing.T) {
	if Key("al", "ice1") == Key("ali", "ce1") {
		t.Errorf("Key(al, ice1) = Key(ali, ce1) = %q", Key("al", "ice1"))
	}
}
