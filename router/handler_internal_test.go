package router

import (
	"context"
	"errors"
	"net/http"
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
	// The set is full and no bucket has refilled: d shares the overflow bucket.
	if ok, _ := s.allow("d", t0); !ok {
		t.Fatal("d refused its first call from the overflow bucket")
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
	if ok, _ := s.allow("a", t0); !ok {
		t.Fatal("first call refused")
	}
	ok, wait := s.allow("a", t0.Add(3*time.Second))
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
	inf := newLimiters(TrialLimit{Rate: rate.Inf, Burst: 1, MaxCallers: 1})
	for range 10 {
		if ok, _ := inf.allow("a", t0); !ok {
			t.Fatal("rate.Inf refused a call")
		}
	}
}

func TestMemoryIdempotencyStore(t *testing.T) {
	ctx := context.Background()
	s := &MemoryIdempotencyStore{MaxEntries: 2}
	e, err := s.Reserve(ctx, "k1", "f1", t0, t0.Add(time.Hour))
	if err != nil || e.State != IdempotencyReserved {
		t.Fatalf("Reserve new: %+v %v, want reserved", e, err)
	}
	e, _ = s.Reserve(ctx, "k1", "f2", t0, t0.Add(time.Hour))
	if e.State != IdempotencyInFlight || e.Fingerprint != "f1" || e.Done == nil {
		t.Fatalf("Reserve held key: %+v, want in flight with f1 and a Done channel", e)
	}
	done := e.Done
	resp := &StoredResponse{Status: 200, ContentType: "application/json", Body: []byte("{}")}
	s.Complete(ctx, "k1", resp, t0)
	select {
	case <-done:
	default:
		t.Error("Done not closed by Complete")
	}
	if e, _ = s.Reserve(ctx, "k1", "f1", t0.Add(time.Minute), t0.Add(time.Hour)); e.State != IdempotencyCompleted || e.Response != resp {
		t.Errorf("Reserve completed key: %+v, want the stored response", e)
	}
	// k2 in flight; the store is full; k3 evicts the completed k1.
	s.Reserve(ctx, "k2", "f", t0, t0.Add(time.Hour))
	if e, err = s.Reserve(ctx, "k3", "f", t0, t0.Add(time.Hour)); err != nil || e.State != IdempotencyReserved {
		t.Fatalf("Reserve k3 on a full store: %+v %v, want reserved after evicting k1", e, err)
	}
	// k2 and k3 in flight: nothing can be evicted, and k1 is gone.
	if _, err = s.Reserve(ctx, "k1", "f1", t0, t0.Add(time.Hour)); err == nil {
		t.Error("Reserve on a store full of in-flight keys: no error")
	}
	var p *Error
	if !errors.As(err, &p) || p.Status != http.StatusServiceUnavailable {
		t.Errorf("error %v, want a 503 *Error", err)
	}
	// Released keys are forgotten; expired completed ones too.
	s.Release(ctx, "k2")
	s.Complete(ctx, "k3", resp, t0)
	if e, _ = s.Reserve(ctx, "k2", "f", t0.Add(2*time.Hour), t0.Add(3*time.Hour)); e.State != IdempotencyReserved {
		t.Errorf("released key: %+v, want reserved anew", e)
	}
	if s.Len() != 1 { // k2 reserved; k3 expired
		t.Errorf("Len = %d, want 1", s.Len())
	}
}

func TestParseTraceparent(t *testing.T) {
	const id = "4bf92f3577b34da6a3ce929d0e0e4736"
	tests := []struct {
		in        string
		wantID    string
		wantFlags string
	}{
		{"00-" + id + "-00f067aa0ba902b7-01", id, "01"},
		{" 00-" + id + "-00f067aa0ba902b7-00 ", id, "00"},
		{"01-" + id + "-00f067aa0ba902b7-01-extra", id, "01"},
		{"00-" + id + "-00f067aa0ba902b7-01-extra", "", ""}, // version 00 has no extra fields
		{"ff-" + id + "-00f067aa0ba902b7-01", "", ""},
		{"00-" + "4BF92F3577B34DA6A3CE929D0E0E4736" + "-00f067aa0ba902b7-01", "", ""},
		{"00-00000000000000000000000000000000-00f067aa0ba902b7-01", "", ""},
		{"00-" + id + "-0000000000000000-01", "", ""},
		{"00-" + id + "-00f067aa0ba902b7", "", ""},
		{"", "", ""},
		{"00_" + id + "_00f067aa0ba902b7_01", "", ""},
	}
	for _, tt := range tests {
		gotID, gotFlags, ok := parseTraceparent(tt.in)
		if gotID != tt.wantID || gotFlags != tt.wantFlags || ok != (tt.wantID != "") {
			t.Errorf("parseTraceparent(%q) = %q, %q, %v; want %q, %q", tt.in, gotID, gotFlags, ok, tt.wantID, tt.wantFlags)
		}
	}
	tp := newTraceparent(id, "01")
	if gotID, _, ok := parseTraceparent(tp); !ok || gotID != id {
		t.Errorf("newTraceparent gives %q, which does not parse back to %s", tp, id)
	}
}

func TestBackoff(t *testing.T) {
	for attempt := range 40 {
		d := backoff(100*time.Millisecond, 2*time.Second, attempt, nil)
		limit := min(2*time.Second, 100*time.Millisecond<<min(attempt, 20))
		if d < limit/2 || d > limit {
			t.Errorf("attempt %d: %s, want within [%s, %s]", attempt, d, limit/2, limit)
		}
	}
	resp := &http.Response{StatusCode: 429, Header: http.Header{"Retry-After": {"7"}}}
	if d := backoff(time.Millisecond, time.Second, 0, resp); d != 7*time.Second {
		t.Errorf("with Retry-After 7: %s, want 7s", d)
	}
	resp.Header.Set("Retry-After", "soon")
	if _, ok := retryAfter(resp); ok {
		t.Error("Retry-After \"soon\" parsed")
	}
}
