package httpapi

import (
	"container/list"
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/vouchkit/vouch/internal/problem"
)

// IdempotencyStore keeps, per idempotency key, the first response to a
// request, so that the [Server] can answer a repeat without running the
// endpoint again. Keys arrive already scoped by caller.
//
// The protocol is: Reserve; on IdempotencyReserved the caller runs the
// request and then calls Complete with the response (or Release to forget
// the key, so that a repeat runs again), passing the Lease that Reserve
// returned; on IdempotencyCompleted it replays the stored response; on
// IdempotencyInFlight it waits and calls Reserve again. Time is an
// argument, never read from a clock, so that a store can be driven by
// tests and shared by processes.
//
// Implementations must be safe for concurrent use. [MemoryIdempotencyStore]
// is the in-process default; a shared database serves several processes.
type IdempotencyStore interface {
	// Reserve claims key for a request whose fingerprint (a digest of
	// method, path and body) is given, or reports the entry that already
	// holds it. A new reservation, and a response later stored under it,
	// are forgotten at expires. Reserve must not block on another
	// request's progress. Of concurrent Reserves of a free key, exactly
	// one is told IdempotencyReserved.
	Reserve(ctx context.Context, key, fingerprint string, now, expires time.Time) (IdempotencyEntry, error)
	// Complete stores resp under key and ends the reservation named by
	// lease (IdempotencyEntry.Lease). It does nothing when that
	// reservation no longer holds the key (a store whose reservations
	// lapse may have given the key to another request meanwhile): an
	// answer is only ever stored by the request that holds the key. The
	// store must not keep resp's slices' contents mutable by the caller:
	// the caller does not modify them afterwards.
	Complete(ctx context.Context, key, lease string, resp *StoredResponse, now time.Time) error
	// Release ends the reservation named by lease without storing a
	// response: the key is forgotten. Like Complete, it does nothing when
	// the reservation no longer holds the key.
	Release(ctx context.Context, key, lease string) error
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
	// Lease names the reservation when State is IdempotencyReserved; the
	// holder passes it to Complete or Release.
	Lease string
	// Fingerprint is that of the request that holds the key, when State is
	// IdempotencyInFlight or IdempotencyCompleted.
	Fingerprint string
	// Response is the stored response when State is IdempotencyCompleted.
	Response *StoredResponse
	// Done, when State is IdempotencyInFlight, is closed once the holder
	// completes or releases the key. Nil means the store cannot notify and
	// the Server polls.
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

// DefaultIdempotencyWindow is how long the Server keeps a response for
// replay unless told otherwise.
const DefaultIdempotencyWindow = 24 * time.Hour

// DefaultIdempotencyMaxEntries bounds a zero [MemoryIdempotencyStore].
const DefaultIdempotencyMaxEntries = 10000

// DefaultIdempotencyMaxEntriesPerCaller bounds the entries of one caller
// in a [MemoryIdempotencyStore] whose MaxEntriesPerCaller is zero.
const DefaultIdempotencyMaxEntriesPerCaller = 1000

// MemoryIdempotencyStore is an [IdempotencyStore] in process memory,
// bounded in entries overall and per caller (the caller is read from the
// scoped key the Server passes). Expired entries are dropped as time
// passes. A caller at its own bound makes room by dropping its own oldest
// completed entry, never another caller's; when the whole store is full,
// the oldest completed entry of the caller holding the most entries is
// dropped, so that a kept answer goes before its window ends only when
// its caller holds at least as many entries as every other caller. When
// the entries that could make room are all in flight, Reserve answers
// with a *problem.Details of status 503.
//
// Entries in flight are never taken over: a reservation holds until its
// holder completes or releases it (the Server does either on a context
// detached from the client's, so a client that goes away never leaves a
// key held), and Complete and Release act only under the lease Reserve
// gave. Of concurrent Reserves of one key exactly one reserves it; the
// others get a Done channel closed when it completes or is released. The zero value is ready to use and holds
// up to DefaultIdempotencyMaxEntries entries, and
// DefaultIdempotencyMaxEntriesPerCaller per caller; it must not be copied
// after first use.
type MemoryIdempotencyStore struct {
	// MaxEntries bounds the entries kept; zero means
	// DefaultIdempotencyMaxEntries. Set it before first use.
	MaxEntries int
	// MaxEntriesPerCaller bounds the entries kept for one caller; zero
	// means DefaultIdempotencyMaxEntriesPerCaller. Set it before first
	// use.
	MaxEntriesPerCaller int

	mu      sync.Mutex
	entries map[string]*memEntry
	order   list.List             // of *memEntry, oldest reservation first
	callers map[string]*list.List // of *memEntry by caller, oldest first
	leases  uint64                // leases handed out
}

type memEntry struct {
	key, caller  string
	fingerprint  string
	lease        string
	expires      time.Time
	resp         *StoredResponse // nil while in flight
	done         chan struct{}
	el, callerEl *list.Element
}

// Reserve implements [IdempotencyStore].
func (s *MemoryIdempotencyStore) Reserve(_ context.Context, key, fingerprint string, now, expires time.Time) (IdempotencyEntry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.entries == nil {
		s.entries = make(map[string]*memEntry)
		s.callers = make(map[string]*list.List)
	}
	s.expire(now)
	if e, ok := s.entries[key]; ok {
		if e.resp != nil {
			return IdempotencyEntry{State: IdempotencyCompleted, Fingerprint: e.fingerprint, Response: e.resp}, nil
		}
		return IdempotencyEntry{State: IdempotencyInFlight, Fingerprint: e.fingerprint, Done: e.done}, nil
	}
	caller := callerOf(key)
	if !s.makeRoom(caller) {
		return IdempotencyEntry{}, problem.New(http.StatusServiceUnavailable, problem.CodeUnavailable,
			"too many requests in flight with an Idempotency-Key")
	}
	s.leases++
	e := &memEntry{key: key, caller: caller, fingerprint: fingerprint, lease: strconv.FormatUint(s.leases, 10), expires: expires, done: make(chan struct{})}
	e.el = s.order.PushBack(e)
	l := s.callers[caller]
	if l == nil {
		l = list.New()
		s.callers[caller] = l
	}
	e.callerEl = l.PushBack(e)
	s.entries[key] = e
	return IdempotencyEntry{State: IdempotencyReserved, Lease: e.lease}, nil
}

// Complete implements [IdempotencyStore].
func (s *MemoryIdempotencyStore) Complete(_ context.Context, key, lease string, resp *StoredResponse, _ time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.entries[key]; ok && e.resp == nil && e.lease == lease {
		e.resp = resp
		close(e.done)
	}
	return nil
}

// Release implements [IdempotencyStore].
func (s *MemoryIdempotencyStore) Release(_ context.Context, key, lease string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.entries[key]; ok && e.resp == nil && e.lease == lease {
		close(e.done)
		s.remove(e)
	}
	return nil
}

// Len returns the count of entries kept, in flight or completed.
func (s *MemoryIdempotencyStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.entries)
}

// remove forgets e.
func (s *MemoryIdempotencyStore) remove(e *memEntry) {
	s.order.Remove(e.el)
	l := s.callers[e.caller]
	l.Remove(e.callerEl)
	if l.Len() == 0 {
		delete(s.callers, e.caller)
	}
	delete(s.entries, e.key)
}

// expire drops completed entries whose time has passed, oldest first,
// stopping at the first entry still current (a Server uses one window, so
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
			s.remove(e)
		}
		el = next
	}
}

// makeRoom makes room for one more entry of caller, dropping completed
// entries of caller when it is at its own bound, and of the caller with
// the most entries when the store is full. It reports whether the entry
// fits.
func (s *MemoryIdempotencyStore) makeRoom(caller string) bool {
	perCaller := s.MaxEntriesPerCaller
	if perCaller <= 0 {
		perCaller = DefaultIdempotencyMaxEntriesPerCaller
	}
	limit := s.MaxEntries
	if limit <= 0 {
		limit = DefaultIdempotencyMaxEntries
	}
	if l := s.callers[caller]; l != nil && l.Len() >= perCaller && !s.dropOldestCompleted(l, l.Len()-perCaller+1) {
		return false
	}
	for len(s.entries) >= limit {
		// The oldest completed entry of the caller holding the most.
		var victim *memEntry
		for el := s.order.Front(); el != nil; el = el.Next() {
			e := el.Value.(*memEntry)
			if e.resp != nil && (victim == nil || s.callers[e.caller].Len() > s.callers[victim.caller].Len()) {
				victim = e
			}
		}
		if victim == nil {
			return false
		}
		s.remove(victim)
	}
	return true
}

// dropOldestCompleted drops the n oldest completed entries of l and
// reports whether there were n to drop.
func (s *MemoryIdempotencyStore) dropOldestCompleted(l *list.List, n int) bool {
	for el := l.Front(); el != nil && n > 0; {
		next := el.Next()
		if e := el.Value.(*memEntry); e.resp != nil {
			s.remove(e)
			n--
		}
		el = next
	}
	return n <= 0
}

// callerOf returns the caller of a key scoped by scopedKey, or "" for a
// key in another form.
func callerOf(key string) string {
	n, rest, ok := strings.Cut(key, ":")
	size, err := strconv.Atoi(n)
	if !ok || err != nil || size < 0 || len(rest) <= size || rest[size] != ':' {
		return ""
	}
	return rest[:size]
}
