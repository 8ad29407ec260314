package router

import (
	"container/list"
	"context"
	"net/http"
	"sync"
	"time"

	"github.com/vouchkit/vouch/internal/problem"
)

// IdempotencyStore keeps, per idempotency key, the first response to a
// request, so that the [Handler] can answer a repeat without running the
// Service again. Keys arrive already scoped by caller.
//
// The protocol is: Reserve; on IdempotencyReserved the caller runs the
// request and then calls Complete with the response (or Release to forget
// the key, so that a repeat runs again); on IdempotencyCompleted it replays
// the stored response; on IdempotencyInFlight it waits and calls Reserve
// again. Time is an argument, never read from a clock, so that a store can
// be driven by tests and shared by processes.
//
// Implementations must be safe for concurrent use. [MemoryIdempotencyStore]
// is the in-process default; a shared database serves several processes.
type IdempotencyStore interface {
	// Reserve claims key for a request whose fingerprint (a digest of
	// method, path and body) is given, or reports the entry that already
	// holds it. A new reservation, and a response later stored under it,
	// are forgotten at expires. Reserve must not block on another
	// request's progress.
	Reserve(ctx context.Context, key, fingerprint string, now, expires time.Time) (IdempotencyEntry, error)
	// Complete stores resp under a key reserved by this caller and ends
	// its reservation. The store must not keep resp's slices' contents
	// mutable by the caller: the caller does not modify them afterwards.
	Complete(ctx context.Context, key string, resp *StoredResponse, now time.Time) error
	// Release ends a reservation without storing a response: the key is
	// forgotten.
	Release(ctx context.Context, key string) error
}

// IdempotencyState says who holds an idempotency key.
type IdempotencyState int

// The states of an idempotency key.
const (
	// IdempotencyReserved: the key is now held by the caller of Reserve,
	// which must Complete or Release it.
	IdempotencyReserved IdempotencyState = iota + 1
	// IdempotencyInFlight: another request holds the key and runs.
	IdempotencyInFlight
	// IdempotencyCompleted: a response is stored under the key.
	IdempotencyCompleted
)

// IdempotencyEntry is what [IdempotencyStore.Reserve] found.
type IdempotencyEntry struct {
	// State says who holds the key.
	State IdempotencyState
	// Fingerprint is that of the request that holds the key, when State is
	// IdempotencyInFlight or IdempotencyCompleted.
	Fingerprint string
	// Response is the stored response when State is IdempotencyCompleted.
	Response *StoredResponse
	// Done, when State is IdempotencyInFlight, is closed once the holder
	// completes or releases the key. Nil means the store cannot notify and
	// the Handler polls.
	Done <-chan struct{}
}

// StoredResponse is a response kept for replay.
type StoredResponse struct {
	// Status is the HTTP status code.
	Status int
	// ContentType is the Content-Type header.
	ContentType string
	// Body is the response body.
	Body []byte
}

// DefaultIdempotencyWindow is how long the Handler keeps a response for
// replay unless told otherwise.
const DefaultIdempotencyWindow = 24 * time.Hour

// DefaultIdempotencyMaxEntries bounds a zero [MemoryIdempotencyStore].
const DefaultIdempotencyMaxEntries = 10000

// MemoryIdempotencyStore is an [IdempotencyStore] in process memory,
// bounded in entries. Expired entries are dropped as time passes; when the
// store is full the oldest completed entries are dropped first, and when
// every entry is in flight Reserve answers with an *[Error] of status 503.
// The zero value is ready to use and holds up to
// DefaultIdempotencyMaxEntries entries; it must not be copied after first
// use.
type MemoryIdempotencyStore struct {
	// MaxEntries bounds the entries kept; zero means
	// DefaultIdempotencyMaxEntries. Set it before first use.
	MaxEntries int

	mu      sync.Mutex
	entries map[string]*list.Element // of *memEntry
	order   list.List                // of *memEntry, oldest reservation first
}

type memEntry struct {
	key         string
	fingerprint string
	expires     time.Time
	resp        *StoredResponse // nil while in flight
	done        chan struct{}
}

// Reserve implements [IdempotencyStore].
func (s *MemoryIdempotencyStore) Reserve(_ context.Context, key, fingerprint string, now, expires time.Time) (IdempotencyEntry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.entries == nil {
		s.entries = make(map[string]*list.Element)
	}
	s.expire(now)
	if el, ok := s.entries[key]; ok {
		e := el.Value.(*memEntry)
		if e.resp != nil {
			return IdempotencyEntry{State: IdempotencyCompleted, Fingerprint: e.fingerprint, Response: e.resp}, nil
		}
		return IdempotencyEntry{State: IdempotencyInFlight, Fingerprint: e.fingerprint, Done: e.done}, nil
	}
	if !s.makeRoom() {
		return IdempotencyEntry{}, problem.New(http.StatusServiceUnavailable, problem.CodeUnavailable,
			"too many requests in flight with an Idempotency-Key")
	}
	e := &memEntry{key: key, fingerprint: fingerprint, expires: expires, done: make(chan struct{})}
	s.entries[key] = s.order.PushBack(e)
	return IdempotencyEntry{State: IdempotencyReserved}, nil
}

// Complete implements [IdempotencyStore].
func (s *MemoryIdempotencyStore) Complete(_ context.Context, key string, resp *StoredResponse, _ time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if el, ok := s.entries[key]; ok {
		e := el.Value.(*memEntry)
		if e.resp == nil {
			e.resp = resp
			close(e.done)
		}
	}
	return nil
}

// Release implements [IdempotencyStore].
func (s *MemoryIdempotencyStore) Release(_ context.Context, key string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if el, ok := s.entries[key]; ok {
		e := el.Value.(*memEntry)
		if e.resp == nil {
			close(e.done)
		}
		s.order.Remove(el)
		delete(s.entries, key)
	}
	return nil
}

// Len returns the count of entries kept, in flight or completed.
func (s *MemoryIdempotencyStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.entries)
}

// expire drops completed entries whose time has passed, oldest first,
// stopping at the first entry still current (a Handler uses one window, so
// later reservations expire later). In-flight entries stay until released
// or completed: their holder is still running.
func (s *MemoryIdempotencyStore) expire(now time.Time) {
	for el := s.order.Front(); el != nil; {
		next := el.Next()
		e := el.Value.(*memEntry)
		if now.Before(e.expires) {
			return
		}
		if e.resp != nil {
			s.order.Remove(el)
			delete(s.entries, e.key)
		}
		el = next
	}
}

// makeRoom drops the oldest completed entries until one more fits, and
// reports whether it does.
func (s *MemoryIdempotencyStore) makeRoom() bool {
	limit := s.MaxEntries
	if limit <= 0 {
		limit = DefaultIdempotencyMaxEntries
	}
	for el := s.order.Front(); el != nil && len(s.entries) >= limit; {
		next := el.Next()
		if e := el.Value.(*memEntry); e.resp != nil {
			s.order.Remove(el)
			delete(s.entries, e.key)
		}
		el = next
	}
	return len(s.entries) < limit
}
