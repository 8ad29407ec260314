package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/router"
)

// TestIdempotencyStore_takeoverKeepsTheHolders: after a lease takeover the
// request whose lease lapsed can neither store its answer under the new
// holder's reservation (another request, another fingerprint) nor release
// it; the new holder completes it.
func TestIdempotencyStore_takeoverKeepsTheHolders(t *testing.T) {
	dbs := openDBs(t, 2)
	a, b := dbs[0].Idempotency(), dbs[1].Idempotency()
	a.Lease, b.Lease = time.Minute, time.Minute
	ctx := context.Background()
	expires := t0.Add(24 * time.Hour)
	ea, err := a.Reserve(ctx, "k", "fp-a", t0, expires)
	if err != nil || ea.State != router.IdempotencyReserved {
		t.Fatalf("first Reserve = %+v, %v; want reserved", ea, err)
	}
	eb, err := b.Reserve(ctx, "k", "fp-b", t0.Add(time.Minute), expires)
	if err != nil || eb.State != router.IdempotencyReserved {
		t.Fatalf("Reserve once the lease lapsed = %+v, %v; want reserved", eb, err)
	}
	// The first holder comes back late: its Complete and Release must not
	// touch b's reservation.
	if err := a.Complete(ctx, "k", ea.Lease, &router.StoredResponse{Status: 200, Body: []byte(`{"by":"a"}`)}, t0.Add(80*time.Second)); err != nil {
		t.Fatal(err)
	}
	if err := a.Release(ctx, "k", ea.Lease); err != nil {
		t.Fatal(err)
	}
	if e, err := a.Reserve(ctx, "k", "fp-b", t0.Add(90*time.Second), expires); err != nil || e.State != router.IdempotencyInFlight || e.Fingerprint != "fp-b" {
		t.Fatalf("after the late holder's calls = %+v, %v; want in flight for fp-b", e, err)
	}
	want := &router.StoredResponse{Status: 200, ContentType: "application/json", Body: []byte(`{"by":"b"}`)}
	if err := b.Complete(ctx, "k", eb.Lease, want, t0.Add(100*time.Second)); err != nil {
		t.Fatal(err)
	}
	e, err := a.Reserve(ctx, "k", "fp-b", t0.Add(3*time.Minute), expires)
	if err != nil || e.State != router.IdempotencyCompleted || e.Fingerprint != "fp-b" {
		t.Fatalf("Reserve after completion = %+v, %v; want completed for fp-b", e, err)
	}
	if diff := cmp.Diff(want, e.Response); diff != "" {
		t.Errorf("stored response (-want +got):\n%s", diff)
	}
}
