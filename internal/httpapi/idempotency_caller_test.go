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
	if l := s.callers["ip:192.0.2.1"]; l != nil && l.Len() > 4 {
		t.Errorf("one caller holds %d entries, want at most MaxEntriesPerCaller 4", l.Len())
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
