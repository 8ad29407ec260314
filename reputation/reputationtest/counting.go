package reputationtest

import (
	"context"
	"sync/atomic"

	"github.com/vouchkit/vouch/reputation"
)

// A CountingStore is a [reputation.Memory] that counts its reads, for a
// test of how many store round trips a call makes. The zero
// CountingStore is empty and ready to use.
type CountingStore struct {
	reputation.Memory
	loads atomic.Int64
}

// Load implements [reputation.Store], counting the read.
func (s *CountingStore) Load(ctx context.Context, keys []reputation.Key) ([]reputation.Record, error) {
	s.loads.Add(1)
	return s.Memory.Load(ctx, keys)
}

// Loads returns how many reads s has served.
func (s *CountingStore) Loads() int64 { return s.loads.Load() }
