package x402

import (
	"context"
	"sync"
	"time"
)

// ReplayStore remembers the payments a server has accepted, so that one
// authorization pays for one request only, and the payments among them
// that were settled, so that the answer a settled payment bought can be
// delivered again when it was lost (see [Middleware]). Implementations
// must be safe for concurrent use; a database can implement it to share
// the memory between server instances.
//
// What a store promises the middleware under concurrency: of concurrent
// Reserves of one key, exactly one reports true. Under disconnects and
// retries, the middleware calls Release and MarkSettled on contexts
// detached from the client's, so a client that goes away neither frees a
// proof it may have paid with nor loses the record of its settlement.
type ReplayStore interface {
	// Reserve records key as used until the time until and reports true,
	// or, when key is already recorded and not expired at now, reports
	// false and changes nothing. The check and the record are one atomic
	// step. A key taken over after its time holds no settlement.
	Reserve(ctx context.Context, key string, now, until time.Time) (bool, error)
	// Release forgets key, for a payment that was reserved but not used
	// (its verification failed or the handler did not succeed), so that
	// the payer may send the same proof again.
	Release(ctx context.Context, key string) error
	// MarkSettled records that the payment reserved under key was
	// settled, for the request and with the settlement sp describes. It
	// does nothing when key is not recorded.
	MarkSettled(ctx context.Context, key string, sp SettledPayment) error
	// LookupSettled returns what MarkSettled recorded under key, and
	// false when key is not recorded, has expired at now, or was never
	// marked settled. It changes nothing.
	LookupSettled(ctx context.Context, key string, now time.Time) (SettledPayment, bool, error)
}

// SettledPayment is what a [ReplayStore] keeps of a settled payment.
type SettledPayment struct {
	// Request names the request the payment paid for: a digest of the
	// proof's payload and of the request's method, path and
	// Idempotency-Key. Only a repeat of that request may have its answer
	// delivered again.
	Request string
	// Settlement is the facilitator's answer, sent again with a delivered
	// answer.
	Settlement SettleResponse
}

// MemoryReplay is a ReplayStore in memory, for one server process: its
// Reserve is atomic under a mutex, and what it records is lost when the
// process ends (a proof accepted before a restart is then accepted once
// more; use a shared store when that matters). Its zero value is ready to
// use. Expired keys are dropped as new ones arrive.
type MemoryReplay struct {
	mu        sync.Mutex
	keys      map[string]replayEntry
	pruneSize int // prune when len(keys) reaches it
}

type replayEntry struct {
	until   time.Time
	settled *SettledPayment // nil until MarkSettled
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
		s.keys = make(map[string]replayEntry)
	}
	if e, ok := s.keys[key]; ok && now.Before(e.until) {
		return false
	}
	if len(s.keys) >= s.pruneSize {
		for k, e := range s.keys {
			if !now.Before(e.until) {
				delete(s.keys, k)
			}
		}
		s.pruneSize = 2*len(s.keys) + 64
	}
	s.keys[key] = replayEntry{until: until}
	return true
}

// Release implements ReplayStore.
func (s *MemoryReplay) Release(_ context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(s.keys, key)
	return nil
}

// MarkSettled implements ReplayStore.
func (s *MemoryReplay) MarkSettled(_ context.Context, key string, sp SettledPayment) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.keys[key]; ok {
		e.settled = &sp
		s.keys[key] = e
	}
	return nil
}

// LookupSettled implements ReplayStore.
func (s *MemoryReplay) LookupSettled(_ context.Context, key string, now time.Time) (SettledPayment, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.keys[key]
	if !ok || !now.Before(e.until) || e.settled == nil {
		return SettledPayment{}, false, nil
	}
	return *e.settled, true, nil
}

// Len returns the number of keys held, expired ones included until the
// next prune.
func (s *MemoryReplay) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.keys)
}
