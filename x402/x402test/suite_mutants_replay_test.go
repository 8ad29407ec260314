package x402test_test

import (
	"context"
	"testing"
	"time"

	"github.com/vouchkit/vouch/internal/mutanttest"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/x402test"
)

// reserveForever is a ReplayStore whose reservations never expire: a
// proof's key stays refused past its time, contrary to the contract.
type reserveForever struct{ x402.MemoryReplay }

func (s *reserveForever) Reserve(ctx context.Context, key string, now, until time.Time) (bool, error) {
	return s.MemoryReplay.Reserve(ctx, key, now, until.Add(100*365*24*time.Hour)) // the mutation
}

// TestReplayStoreSuite_catchesNoExpiry: the suite should fail a store that
// refuses a key after its time.
func TestReplayStoreSuite_catchesNoExpiry(t *testing.T) {
	if mutanttest.Child(t) {
		x402test.TestReplayStore(t, func(*testing.T) (a, b x402.ReplayStore) {
			s := &reserveForever{x402.MemoryReplay{MaxRetention: 200 * 365 * 24 * time.Hour}}
			return s, s
		})
		return
	}
	mutanttest.MustFail(t, "reservations that never expire")
}
