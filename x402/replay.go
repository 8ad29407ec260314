package x402

import (
	"context"
	"sync"
	"time"
)

// ReplayStore remembers the payments a server has accepted, so that one
// authorization pays for one request only. Implementations must be safe
// for concurrent use; a database can implement it to share the memory
// between server instances.
type ReplayStore interface {
	// Reserve records key as used until the time until and reports true,
	// or, when key is already recorded and not expired at now, reports
	// false and changes nothing. The check and the record are one atomic
	// step.
	Reserve(ctx context.Context, key string, now, until time.Time) (bool, error)
	// Release forgets key, for a payment that was reserved but not used
	// (its verification failed or the handler did not succeed), so that
	// the payer may send the same proof again.
	Release(ctx context.Context, key string) error
}

// MemoryReplay is a ReplayStore in memory, for one server process. Its zero
// value is ready to use. Expired keys are dropped as new ones arrive.
type MemoryReplay struct {
	mu        sync.Mutex
	keys      map[string]time.Time // key → until
	pruneSize int                  // prune when len(keys) reaches it
}

// Reserve implements ReplayStore.
func (s *MemoryReplay) Reserve(_ context.Context, key string, now, until time.Time) (bool, error) {
	return s.ReserveAt(now, key, until), nil
}

// ReserveAt is Reserve without a context and error.
func (s *MemoryReplay) ReserveAt(now time.Time, key string, until time.Time) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.keys == nil {
		s.keys = make(map[string]time.Time)
	}
	if u, ok := s.keys[key]; ok && now.Before(u) {
		return false
	}
	if len(s.keys) >= s.pruneSize {
		for k, u := range s.keys {
			if !now.Before(u) {
				delete(s.keys, k)
			}
		}
		s.pruneSize = 2*len(s.keys) + 64
	}
	s.keys[key] = until
	return true
}

// Release implements ReplayStore.
func (s *MemoryReplay) Release(_ context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.keys, key)
	return nil
}

// Len returns the number of keys held, expired ones included until the
// next prune.
func (s *MemoryReplay) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.keys)
}
