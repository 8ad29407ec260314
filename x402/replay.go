package x402

import (
	"cmp"
	"container/heap"
	"context"
	"fmt"
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
	// step. until lies after now. A key taken over after its time holds
	// no settlement.
	Reserve(ctx context.Context, key string, now, until time.Time) (bool, error)
	// Release forgets key, for a payment that was reserved but not used
	// (its verification failed or the handler did not succeed), so that
	// the payer may send the same proof again. until is the time the
	// caller's Reserve recorded, and names its reservation: Release does
	// nothing when key is recorded under another time, as it is once
	// another Reserve took it over after its time (that Reserve's time is
	// later), so that a request that outlived its reservation never frees
	// the key its new holder runs under.
	Release(ctx context.Context, key string, until time.Time) error
	// MarkSettled records that the payment reserved under key was
	// settled, for the request and with the settlement sp describes. It
	// does nothing when key is not recorded. It records whoever holds
	// key: a retry that completes the capture of the payment's first use
	// records it too (trustmcp does).
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

// DefaultMaxValidity is how long past its arrival an authorization may
// stay valid when [MiddlewareConfig].MaxValidity is zero, and how long
// [MemoryReplay] and [MemoryOutcomes] keep an entry at most when their
// MaxRetention is zero. The official x402 clients sign an authorization
// valid for the offer's maxTimeoutSeconds (60 s for the offers of
// package evm), far within it.
const DefaultMaxValidity = time.Hour

// DefaultReplayMaxEntries bounds the keys of a [MemoryReplay] whose
// MaxEntries is zero.
const DefaultReplayMaxEntries = 100_000

// MemoryReplay is a ReplayStore in memory, for one server process: its
// Reserve is atomic under a mutex, and what it records is lost when the
// process ends (a proof accepted before a restart is then accepted once
// more; use a shared store when that matters). Its zero value is ready to
// use; set its bounds before first use.
//
// Its memory is bounded whatever the payers sign: it keeps a key until
// its time, which may not lie more than MaxRetention ahead (Reserve
// refuses a longer one with [ErrBeyondRetention], so that a proof is
// never forgotten while it can still pay), and holds at most MaxEntries
// unexpired keys: when full, Reserve refuses a new key with
// [ErrReplayStoreFull] (the payment is answered 503), since forgetting a
// used proof early would let it pay twice. Expired keys are dropped as
// new ones arrive.
type MemoryReplay struct {
	// MaxRetention is the longest a key is kept; zero means
	// DefaultMaxValidity. [Middleware] refuses a store that forgets
	// sooner than its MaxValidity.
	MaxRetention time.Duration
	// MaxEntries bounds the keys held; zero means
	// DefaultReplayMaxEntries.
	MaxEntries int

	mu    sync.Mutex
	keys  map[string]*replayEntry
	order untilHeap[*replayEntry] // the keys, the one expiring first on top
}

type replayEntry struct {
	key     string
	until   time.Time
	settled *SettledPayment // nil until MarkSettled
	i       int             // index in order
}

func (e *replayEntry) expiry() time.Time { return e.until }
func (e *replayEntry) index() *int       { return &e.i }

// retention is s's MaxRetention, the default for zero.
func (s *MemoryReplay) retention() time.Duration {
	return cmp.Or(s.MaxRetention, DefaultMaxValidity)
}

// Reserve implements ReplayStore. It fails with ErrBeyondRetention when
// until lies more than MaxRetention after now, and with
// ErrReplayStoreFull when key is new and MaxEntries keys are held.
func (s *MemoryReplay) Reserve(_ context.Context, key string, now, until time.Time) (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.keys == nil {
		s.keys = make(map[string]*replayEntry)
	}
	for len(s.order) > 0 && !now.Before(s.order[0].until) {
		delete(s.keys, heap.Pop(&s.order).(*replayEntry).key)
	}
	if _, ok := s.keys[key]; ok {
		return false, nil
	}
	if until.After(now.Add(s.retention())) {
		return false, fmt.Errorf("%w: %s kept until %s, more than %s ahead", ErrBeyondRetention, key, until.UTC().Format(time.RFC3339), s.retention())
	}
	if len(s.keys) >= cmp.Or(s.MaxEntries, DefaultReplayMaxEntries) {
		return false, ErrReplayStoreFull
	}
	e := &replayEntry{key: key, until: until}
	heap.Push(&s.order, e)
	s.keys[key] = e
	return true, nil
}

// ReserveAt is Reserve without a context; it reports false also when
// Reserve fails.
func (s *MemoryReplay) ReserveAt(now time.Time, key string, until time.Time) bool {
	ok, _ := s.Reserve(context.Background(), key, now, until)
	return ok
}

// Release implements ReplayStore.
func (s *MemoryReplay) Release(_ context.Context, key string, until time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.keys[key]; ok && e.until.Equal(until) {
		heap.Remove(&s.order, e.i)
		delete(s.keys, key)
	}
	return nil
}

// MarkSettled implements ReplayStore.
func (s *MemoryReplay) MarkSettled(_ context.Context, key string, sp SettledPayment) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.keys[key]; ok {
		e.settled = &sp
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
// next Reserve.
func (s *MemoryReplay) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.keys)
}

// untilHeap orders entries by their expiry, the first to expire on top
// (container/heap), each entry knowing its index so that it can be
// removed.
type untilHeap[E interface {
	expiry() time.Time
	index() *int
}] []E

func (h untilHeap[E]) Len() int           { return len(h) }
func (h untilHeap[E]) Less(i, j int) bool { return h[i].expiry().Before(h[j].expiry()) }
func (h untilHeap[E]) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	*h[i].index() = i
	*h[j].index() = j
}
func (h *untilHeap[E]) Push(x any) { e := x.(E); *e.index() = len(*h); *h = append(*h, e) }
func (h *untilHeap[E]) Pop() any {
	old := *h
	e := old[len(old)-1]
	*h = old[:len(old)-1]
	return e
}
