package receipttest_test

// Mutation test of the conformance suite: it runs TestStore against a
// deliberately broken store in a child process and fails when the suite
// passes it.

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/vouchkit/vouch/internal/mutanttest"
	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/receipt/receipttest"
)

// secondsStore is MemStore keeping ExpiresAt to the second only. The
// Store contract: "The Issuer writes whole milliseconds; a store may keep
// it to the microsecond", and the suite's doc promises "expiry compared to
// the microsecond". A record issued to expire at 12:00:00.999 by this
// store is gone at 12:00:00.000.
type secondsStore struct{ *receipt.MemStore }

func (s secondsStore) Put(ctx context.Context, rec receipt.Record) error {
	rec.ExpiresAt = rec.ExpiresAt.Truncate(time.Second) // the mutation
	return s.MemStore.Put(ctx, rec)
}

// TestStoreSuite_catchesExpiryKeptToTheSecond: the suite should fail a
// store that drops an expiry's milliseconds. All of its records expire at
// whole hours after its base time, so it cannot tell.
func TestStoreSuite_catchesExpiryKeptToTheSecond(t *testing.T) {
	if mutanttest.Child(t) {
		receipttest.TestStore(t, func(*testing.T) receipt.Store { return secondsStore{&receipt.MemStore{}} })
		return
	}
	// The store is broken: a record expiring at .500 is gone at .000.
	s := secondsStore{&receipt.MemStore{}}
	at := time.Date(2026, 5, 1, 12, 0, 0, 500e6, time.UTC)
	rec := receipt.Record{ID: "rcpt_00000000000000000000000001", Data: []byte(`{}`), Owner: "o", Visibility: receipt.VisibilityPrivate, ExpiresAt: at}
	if err := s.Put(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Get(context.Background(), rec.ID, at.Add(-100*time.Millisecond)); !errors.Is(err, receipt.ErrNotFound) {
		t.Fatalf("the mutant is not broken: Get before expiry = %v", err)
	}
	mutanttest.MustFail(t, "expiries kept to the second")
}
