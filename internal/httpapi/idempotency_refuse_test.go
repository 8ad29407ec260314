package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestMemoryIdempotencyStore_refusalDropsNothing: a caller at its own
// bound (two entries, one still running) asks for a third, larger than
// its one finished answer, while the rest of the budget's bytes are held
// by another caller: in flight (in the budget of other requests, where
// that caller, holding the most bytes, is the one to drop from), or
// finished (in the pinned paid budget, where only the caller's own
// answers may go). Dropping the caller's finished answer does not make
// room, so the request is refused 503, and the finished answer is still
// kept for its retry: the refusal dropped nothing. It used to drop the
// answer first and then refuse.
func TestMemoryIdempotencyStore_refusalDropsNothing(t *testing.T) {
	ctx := context.Background()
	const fp = "fp"
	size := func(key string, body int) int64 { return int64(len(key)+len(fp)) + memEntryOverhead + int64(body) }
	for _, paid := range []bool{false, true} {
		prefix := ""
		if paid {
			prefix = paidKeyPrefix
		}
		key := func(caller, k string) string { return prefix + scopedKey(caller, k) }
		long := strings.Repeat("k", 300)
		a1, a2, a3 := key("key:alice", "a1"), key("key:alice", "a2"), key("key:alice", "a3"+long)
		others := []string{key("key:bob", "b1"+long), key("key:bob", "b2"+long)}
		if paid {
			others = others[:1] // one finished answer of bob's
		}
		budget := size(a1, 1) + size(a2, 0)
		for _, k := range others {
			budget += size(k, 0)
		}
		s := &MemoryIdempotencyStore{MaxEntriesPerCaller: 2, MaxBytes: budget}
		reserve := func(k string) (IdempotencyEntry, error) {
			return s.Reserve(ctx, k, fp, t0, t0.Add(time.Hour))
		}
		for _, k := range others {
			e, err := reserve(k)
			if err != nil {
				t.Fatal(err)
			}
			if paid {
				s.Complete(ctx, k, e.Lease, &StoredResponse{Status: http.StatusOK}, t0)
			}
		}
		e, err := reserve(a1)
		if err != nil {
			t.Fatal(err)
		}
		s.Complete(ctx, a1, e.Lease, &StoredResponse{Status: http.StatusOK, Body: []byte("1")}, t0)
		if _, err := reserve(a2); err != nil {
			t.Fatal(err)
		}
		bytes := s.Bytes()
		if _, err := reserve(a3); err == nil {
			t.Fatalf("paid %t: the third entry was reserved, want 503", paid)
		}
		type state struct {
			Bytes  int64
			Len    int
			Kept   IdempotencyState
			Answer string
		}
		got := state{Bytes: s.Bytes(), Len: s.Len()}
		if e, err := reserve(a1); err == nil {
			got.Kept = e.State
			if e.Response != nil {
				got.Answer = string(e.Response.Body)
			}
		}
		want := state{Bytes: bytes, Len: len(others) + 2, Kept: IdempotencyCompleted, Answer: "1"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("paid %t: after the refusal (-want +got):\n%s", paid, diff)
		}
	}
}

// TestMemoryIdempotencyStore_refusalsKeepTheStoreWhole: many callers
// reserve, complete and release keys of many sizes in a small store,
// so that many reservations are refused after entries were dropped to
// make room and put back; after every step the store is whole: each
// budget's entries in the order they were reserved, each caller's too,
// the byte counts their entries' sums, the callers' heap in order.
func TestMemoryIdempotencyStore_refusalsKeepTheStoreWhole(t *testing.T) {
	ctx := context.Background()
	s := &MemoryIdempotencyStore{MaxEntries: 12, MaxEntriesPerCaller: 4, MaxBytes: 6000}
	leases := map[string]string{}
	refused := 0
	for i := range 5000 {
		n := uint(i) * 2654435761 >> 5 // a spread of values, the same each run
		now := t0.Add(time.Duration(i) * time.Second)
		caller := []string{"key:a", "key:b", "key:c", "ip:192.0.2.1", "ip:192.0.2.2"}[n%5]
		k := scopedKey(caller, strings.Repeat("k", int(n/5%8*(n/5%8))*30))
		if n/40%3 == 0 {
			k = paidKeyPrefix + k
		}
		if lease, ok := leases[k]; ok {
			if n/120%4 == 0 {
				s.Release(ctx, k, lease)
			} else {
				s.Complete(ctx, k, lease, &StoredResponse{Status: http.StatusOK, Body: []byte(strings.Repeat("b", int(n/480%700)))}, now)
			}
			delete(leases, k)
		} else if e, err := s.Reserve(ctx, k, "fp", now, now.Add(40*time.Second)); err != nil {
			refused++
		} else if e.State == IdempotencyReserved {
			leases[k] = e.Lease
		}
		checkWhole(t, s)
	}
	if refused == 0 {
		t.Errorf("no reservation was refused; the test does not exercise the refusal")
	}
}

// checkWhole fails t when s is not whole (see
// TestMemoryIdempotencyStore_refusalsKeepTheStoreWhole).
func checkWhole(t *testing.T, s *MemoryIdempotencyStore) {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	lease := func(e *memEntry) int { n, _ := strconv.Atoi(e.lease); return n }
	count := 0
	for _, b := range []*memBudget{&s.paid, &s.other} {
		var bytes int64
		last := 0
		perCaller := map[string]int{}
		for el := b.order.Front(); el != nil; el = el.Next() {
			e := el.Value.(*memEntry)
			if lease(e) <= last || s.entries[e.key] != e || e.el != el || e.budget != b {
				t.Fatalf("entry %.40q out of place in its budget", e.key)
			}
			last = lease(e)
			bytes += e.size
			perCaller[e.caller]++
			count++
		}
		if bytes != b.bytes {
			t.Fatalf("budget bytes %d, its entries hold %d", b.bytes, bytes)
		}
		if len(b.callers) != len(perCaller) || len(b.largest) != len(perCaller) {
			t.Fatalf("%d callers listed, %d in the heap, %d holding entries", len(b.callers), len(b.largest), len(perCaller))
		}
		for caller, l := range b.callers {
			var bytes int64
			last := 0
			for el := l.entries.Front(); el != nil; el = el.Next() {
				e := el.Value.(*memEntry)
				if lease(e) <= last || e.callerEl != el || e.caller != caller {
					t.Fatalf("entry %.40q out of place in its caller's list", e.key)
				}
				last = lease(e)
				bytes += e.size
			}
			if l.entries.Len() != perCaller[caller] || l.bytes != bytes || b.largest[l.i] != l {
				t.Fatalf("caller %s: %d entries, %d bytes, heap slot %d; its budget holds %d of its entries, of %d bytes", caller, l.entries.Len(), l.bytes, l.i, perCaller[caller], bytes)
			}
		}
		for i := 1; i < len(b.largest); i++ {
			if b.largest[(i-1)/2].entries.Len() < b.largest[i].entries.Len() {
				t.Fatalf("callers' heap out of order at %d", i)
			}
		}
	}
	if count != len(s.entries) {
		t.Fatalf("%d entries in the budgets, %d in the map", count, len(s.entries))
	}
}
