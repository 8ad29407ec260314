package httpapi

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// TestMemoryIdempotencyStore_callersKeepTheirAnswers: callers that store
// many answers, anonymous trial callers included, drop their own oldest
// answers, never the answer another caller keeps, so that its retry is
// replayed instead of running the work again.
func TestMemoryIdempotencyStore_callersKeepTheirAnswers(t *testing.T) {
	ctx := context.Background()
	s := &MemoryIdempotencyStore{MaxEntries: 10, MaxEntriesPerCaller: 4}
	store := func(caller, key string, at time.Time) {
		t.Helper()
		scoped := scopedKey(caller, key)
		e, err := s.Reserve(ctx, scoped, "fp", at, at.Add(time.Hour))
		if err != nil || e.State != IdempotencyReserved {
			t.Fatalf("Reserve(%s) = %+v, %v; want reserved", scoped, e, err)
		}
		s.Complete(ctx, scoped, e.Lease, &StoredResponse{Status: 200, Body: []byte(caller + key)}, at)
	}
	store("key:alice", "k", t0)
	for i := range 50 { // one anonymous caller, many keys
		store("ip:192.0.2.1", fmt.Sprint("t", i), t0.Add(time.Second))
	}
	for ip := range 5 { // several anonymous callers fill the store
		for i := range 4 {
			store(fmt.Sprintf("ip:198.51.100.%d", ip), fmt.Sprint("t", i), t0.Add(2*time.Second))
		}
	}
	e, err := s.Reserve(ctx, scopedKey("key:alice", "k"), "fp", t0.Add(time.Minute), t0.Add(time.Hour))
	if err != nil || e.State != IdempotencyCompleted || string(e.Response.Body) != "key:alicek" {
		t.Errorf("alice's retry = %+v, %v; want her kept answer", e, err)
	}
	if n := s.Len(); n > 10 {
		t.Errorf("Len = %d, want at most MaxEntries 10", n)
	}
	if l := s.other.callers["ip:192.0.2.1"]; l != nil && l.entries.Len() > 4 {
		t.Errorf("one caller holds %d entries, want at most MaxEntriesPerCaller 4", l.entries.Len())
	}
}

func TestCallerOf(t *testing.T) {
	for key, want := range map[string]string{
		scopedKey("key:alice", "k:1"): "key:alice",
		scopedKey("", "k"):            "",
		"k":                           "",
		"3:ab":                        "",
		"x:abc:k":                     "",
		"-1::k":                       "",
	} {
		if got := callerOf(key); got != want {
			t.Errorf("callerOf(%q) = %q, want %q", key, got, want)
		}
	}
}

// TestMemoryIdempotencyStore_paidAnswersPinned: paid answers have a
// budget of their own. Other traffic never evicts them, other payers do
// not either (a full paid budget refuses a new payer with 503 before its
// call runs), and a payer's own later calls push out its own oldest
// answers only.
func TestMemoryIdempotencyStore_paidAnswersPinned(t *testing.T) {
	ctx := context.Background()
	s := &MemoryIdempotencyStore{MaxEntries: 3, MaxEntriesPerCaller: 2}
	reserve := func(key string) (IdempotencyEntry, error) {
		return s.Reserve(ctx, key, "fp", t0, t0.Add(time.Hour))
	}
	store := func(key string) {
		t.Helper()
		e, err := reserve(key)
		if err != nil || e.State != IdempotencyReserved {
			t.Fatalf("Reserve(%s) = %+v, %v; want reserved", key, e, err)
		}
		s.Complete(ctx, key, e.Lease, &StoredResponse{Status: 200, Body: []byte(key)}, t0)
	}
	kept := func(key string) bool {
		t.Helper()
		e, err := reserve(key)
		if err != nil {
			t.Fatal(err)
		}
		if e.State == IdempotencyReserved {
			s.Release(ctx, key, e.Lease)
		}
		return e.State == IdempotencyCompleted
	}
	paid := func(caller, key string) string { return paidKeyPrefix + scopedKey(caller, key) }

	store(paid("payer:a", "1"))
	store(paid("payer:b", "1"))
	for i := range 40 {
		store(scopedKey(fmt.Sprintf("ip:2001:db8:%x::1", i), "k"))
	}
	store(paid("payer:c", "1")) // the paid budget is now full
	if _, err := reserve(paid("payer:d", "1")); err == nil {
		t.Error("a new payer in a full paid budget was admitted; want 503")
	}
	store(paid("payer:a", "2"))   // a's own call pushes out a's oldest
	for _, tc := range []struct { // the absent one last: probing it reserves it
		key  string
		want bool
	}{
		{paid("payer:a", "2"), true}, {paid("payer:b", "1"), true}, {paid("payer:c", "1"), true},
		{paid("payer:a", "1"), false},
	} {
		if got := kept(tc.key); got != tc.want {
			t.Errorf("%s kept = %v, want %v", tc.key, got, tc.want)
		}
	}
}

// TestMemoryIdempotencyStore_maxBytes: a budget keeps its responses'
// bytes within MaxBytes, dropping the oldest answers of the caller
// holding the most.
func TestMemoryIdempotencyStore_maxBytes(t *testing.T) {
	ctx := context.Background()
	const maxBytes = 20 << 10
	s := &MemoryIdempotencyStore{MaxBytes: maxBytes}
	body := make([]byte, 1<<10)
	for i := range 100 {
		key := scopedKey("key:alice", fmt.Sprint(i))
		e, err := s.Reserve(ctx, key, "fp", t0, t0.Add(time.Hour))
		if err != nil || e.State != IdempotencyReserved {
			t.Fatalf("Reserve %d = %+v, %v", i, e, err)
		}
		s.Complete(ctx, key, e.Lease, &StoredResponse{Status: 200, Body: body}, t0)
		if b := s.Bytes(); b > maxBytes+int64(len(body)) {
			t.Fatalf("after %d answers: %d bytes, want at most %d and one response", i+1, b, maxBytes)
		}
	}
	if n := s.Len(); n < 10 || n > 20 {
		t.Errorf("Len = %d, want the latest answers that fit in %d bytes", n, maxBytes)
	}
}

// TestMemoryIdempotencyStore_bytesFromTheHeaviest: when a budget's bytes
// are over, the answers dropped are those of the caller holding the most
// bytes, not the most answers: a caller of a few large answers cannot
// push out another's many small ones.
func TestMemoryIdempotencyStore_bytesFromTheHeaviest(t *testing.T) {
	ctx := context.Background()
	const maxBytes = 256 << 10
	s := &MemoryIdempotencyStore{MaxBytes: maxBytes}
	store := func(caller, key string, body []byte) {
		t.Helper()
		scoped := scopedKey(caller, key)
		e, err := s.Reserve(ctx, scoped, "fp", t0, t0.Add(time.Hour))
		if err != nil || e.State != IdempotencyReserved {
			t.Fatalf("Reserve(%s) = %+v, %v; want reserved", scoped, e, err)
		}
		s.Complete(ctx, scoped, e.Lease, &StoredResponse{Status: 200, Body: body}, t0)
	}
	for i := range 100 {
		store("key:alice", fmt.Sprint(i), []byte("small"))
	}
	big := make([]byte, 16<<10)
	for i := range 40 {
		store("key:bob", fmt.Sprint(i), big)
	}
	if l := s.other.callers["key:alice"]; l == nil || l.entries.Len() != 100 {
		t.Errorf("alice keeps %v answers, want her 100", l)
	}
	if b := s.Bytes(); b > maxBytes+int64(len(big)) {
		t.Errorf("%d bytes kept, want at most %d and one response", b, maxBytes)
	}
	var sum int64
	for _, l := range s.other.callers {
		sum += l.bytes
	}
	if sum != s.other.bytes {
		t.Errorf("the callers' bytes add up to %d, the budget says %d", sum, s.other.bytes)
	}
}
