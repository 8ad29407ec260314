package httpapi

import (
	"testing"
	"time"

	"golang.org/x/time/rate"
)

var t0 = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

func TestLimiters_forgetsFullBuckets(t *testing.T) {
	s := newLimiters(TrialLimit{Rate: 1, Burst: 2, MaxCallers: 3})
	for _, c := range []string{"a", "b", "c"} {
		if ok, _ := s.allow(c, t0); !ok {
			t.Fatalf("first call of %s refused", c)
		}
	}
	if n := s.len(); n != 3 {
		t.Fatalf("tracking %d callers, want 3", n)
	}
	// The set is full and no bucket has refilled: the least recently seen
	// caller (a) is forgotten to make room for d.
	if ok, _ := s.allow("d", t0); !ok {
		t.Fatal("d refused its first call")
	}
	if n := s.len(); n != 3 {
		t.Errorf("tracking %d callers with the set full, want 3", n)
	}
	// After a refill every bucket is full again and is forgotten.
	later := t0.Add(sweepEvery)
	if ok, _ := s.allow("e", later); !ok {
		t.Fatal("e refused")
	}
	if n := s.len(); n != 1 {
		t.Errorf("tracking %d callers after the sweep, want 1 (e)", n)
	}
}

func TestLimiters_retryAfter(t *testing.T) {
	s := newLimiters(TrialLimit{Rate: rate.Every(10 * time.Second), Burst: 1, MaxCallers: 10})
	if ok, _, err := s.Allow(t.Context(), "a", t0); !ok || err != nil {
		t.Fatalf("first call refused (%v)", err)
	}
	ok, wait, _ := s.Allow(t.Context(), "a", t0.Add(3*time.Second))
	if ok || wait < 7*time.Second-time.Millisecond || wait > 7*time.Second {
		t.Errorf("second call: ok %v wait %s, want refused with 7s", ok, wait)
	}
	// A refused call does not consume the token that is refilling.
	if ok, _ := s.allow("a", t0.Add(10*time.Second)); !ok {
		t.Error("call after the refill refused")
	}
	if got := retryAfterSeconds(1500 * time.Millisecond); got != 2 {
		t.Errorf("retryAfterSeconds(1.5s) = %d, want 2", got)
	}
	if got := retryAfterSeconds(0); got != 1 {
		t.Errorf("retryAfterSeconds(0) = %d, want 1 (Retry-After is at least a second)", got)
	}
	inf := newLimiters(TrialLimit{Rate: rate.Inf, Burst: 1, MaxCallers: 1})
	for range 10 {
		if ok, _ := inf.allow("a", t0); !ok {
			t.Fatal("rate.Inf refused a call")
		}
	}
}
