package httpapi

import (
	"context"
	"errors"
	"net/http"
	"testing"
	"time"

	"github.com/vouchkit/vouch/problem"
)

func TestMemoryIdempotencyStore(t *testing.T) {
	ctx := context.Background()
	s := &MemoryIdempotencyStore{MaxEntries: 2}
	e, err := s.Reserve(ctx, "k1", "f1", t0, t0.Add(time.Hour))
	if err != nil || e.State != IdempotencyReserved {
		t.Fatalf("Reserve new: %+v %v, want reserved", e, err)
	}
	lease1 := e.Lease
	e, _ = s.Reserve(ctx, "k1", "f2", t0, t0.Add(time.Hour))
	if e.State != IdempotencyInFlight || e.Fingerprint != "f1" || e.Done == nil {
		t.Fatalf("Reserve held key: %+v, want in flight with f1 and a Done channel", e)
	}
	done := e.Done
	resp := &StoredResponse{Status: 200, ContentType: "application/json", Body: []byte("{}")}
	s.Complete(ctx, "k1", lease1, resp, t0)
	select {
	case <-done:
	default:
		t.Error("Done not closed by Complete")
	}
	if e, _ = s.Reserve(ctx, "k1", "f1", t0.Add(time.Minute), t0.Add(time.Hour)); e.State != IdempotencyCompleted || e.Response != resp {
		t.Errorf("Reserve completed key: %+v, want the stored response", e)
	}
	// k2 in flight; the store is full; k3 evicts the completed k1.
	e2, _ := s.Reserve(ctx, "k2", "f", t0, t0.Add(time.Hour))
	if e, err = s.Reserve(ctx, "k3", "f", t0, t0.Add(time.Hour)); err != nil || e.State != IdempotencyReserved {
		t.Fatalf("Reserve k3 on a full store: %+v %v, want reserved after evicting k1", e, err)
	}
	lease3 := e.Lease
	// k2 and k3 in flight: nothing can be evicted, and k1 is gone.
	if _, err = s.Reserve(ctx, "k1", "f1", t0, t0.Add(time.Hour)); err == nil {
		t.Error("Reserve on a store full of in-flight keys: no error")
	}
	var p *problem.Details
	if !errors.As(err, &p) || p.Status != http.StatusServiceUnavailable {
		t.Errorf("error %v, want a 503 *problem.Details", err)
	}
	// Released keys are forgotten; expired completed ones too.
	s.Release(ctx, "k2", e2.Lease)
	s.Complete(ctx, "k3", lease3, resp, t0)
	if e, _ = s.Reserve(ctx, "k2", "f", t0.Add(2*time.Hour), t0.Add(3*time.Hour)); e.State != IdempotencyReserved {
		t.Errorf("released key: %+v, want reserved anew", e)
	}
	if s.Len() != 1 { // k2 reserved; k3 expired
		t.Errorf("Len = %d, want 1", s.Len())
	}
}
