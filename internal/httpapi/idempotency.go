package httpapi

import (
	"cmp"
	"container/heap"
	"container/list"
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/vouchkit/vouch/internal/fairstore"
	"github.com/vouchkit/vouch/problem"
)

// IdempotencyStore keeps, per idempotency key, the first response to a
// request, so that the [Server] can answer a repeat without running the
// endpoint again. Keys arrive already scoped by caller; the keys of the
// requests of [Paid] endpoints begin with "paid:" (the others with a
// decimal length), so that a store can keep paid answers apart.
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

// Bounds of a zero [MemoryIdempotencyStore], each for one of its two
// budgets (paid requests, and the others).
const (
	// DefaultIdempotencyMaxEntries bounds the entries of a budget.
	DefaultIdempotencyMaxEntries = 10000
	// DefaultIdempotencyMaxEntriesPerCaller bounds the entries of one
	// caller.
	DefaultIdempotencyMaxEntriesPerCaller = 1000
	// DefaultIdempotencyMaxBytes bounds the bytes of a budget.
	DefaultIdempotencyMaxBytes = 32 << 20
)

// paidKeyPrefix begins the keys the Server passes to an IdempotencyStore
// for the requests of Paid endpoints.
const paidKeyPrefix = "paid:"

// memEntryOverhead is about what an entry of a MemoryIdempotencyStore
// costs beyond its key, fingerprint and response: the entry, its list
// elements, its map slot and its Done channel.
const memEntryOverhead = 400

// MemoryIdempotencyStore is an [IdempotencyStore] in process memory.
// Expired entries are dropped as time passes. It keeps two budgets, each
// bounded in entries (MaxEntries), bytes (MaxBytes) and entries per
// caller (MaxEntriesPerCaller; the caller is read from the scoped key the
// Server passes, and one known by an IPv6 address counts by its /64, or
// in the Server's own store by the prefix of TrialLimit.IPv6Prefix, as
// the trial limit counts it, so that a host rotating through its
// addresses is one caller): one for the answers of paid requests (keys
// beginning with "paid:"), one for the others. The traffic of one budget
// never evicts an entry of the other.
//
// In both budgets a caller at its own bound makes room by dropping its own
// oldest completed entry, never another caller's. When the budget of the
// other requests is full, the oldest completed entry of the caller holding
// the most entries is dropped, so that a kept answer goes before its
// window ends only when its caller holds at least as many entries as
// every other caller. A paid answer whose payment the paywall settles
// after the call is kept only once it settled (the Server holds its
// reservation until then, see Config.AfterSettle), so that neither an
// answer whose settlement failed nor one a gate refused is kept or
// counted. Paid answers are pinned: the answer a payer paid for stays until its window ends or the same caller's own later calls
// push it out, since the payer's retry with the same proof is delivered
// only from it. The Server looks up a paid answer before the paywall
// settles or refuses a payment (the Replayer's ServeReplay) without
// reserving its key, so that a lookup of a key with nothing kept pushes
// out none of the payer's answers. When the paid budget is full, a paid request of a caller
// holding no completed entry is refused with 503 before it runs (and so
// before it is charged, when the paywall settles after the work).
//
// When no entry may go to make room (the entries that could are all in
// flight, or pinned), Reserve answers with a *problem.Details of status
// 503: so does a full budget whose callers holding the most have only
// requests in flight, rather than drop the answer of a caller holding
// fewer. A request so refused drops nothing: the entries that went
// towards making its room are kept. The bytes of a response are counted when it is stored, so a budget
// may exceed MaxBytes by the responses of the requests in flight.
//
// Entries in flight are never taken over: a reservation holds until its
// holder completes or releases it (the Server does either on a context
// detached from the client's, so a client that goes away never leaves a
// key held), and Complete and Release act only under the lease Reserve
// gave. Of concurrent Reserves of one key exactly one reserves it; the
// others get a Done channel closed when it completes or is released. The
// zero value is ready to use with the default bounds; it must not be
// copied after first use.
type MemoryIdempotencyStore struct {
	// MaxEntries bounds the entries of each budget; zero means
	// DefaultIdempotencyMaxEntries. Set it before first use.
	MaxEntries int
	// MaxEntriesPerCaller bounds the entries kept for one caller; zero
	// means DefaultIdempotencyMaxEntriesPerCaller. Set it before first
	// use.
	MaxEntriesPerCaller int
	// MaxBytes bounds the bytes of each budget: the keys, fingerprints
	// and responses kept, and about 400 bytes an entry for the rest;
	// zero means DefaultIdempotencyMaxBytes. Set it before first use.
	MaxBytes int64

	mu       sync.Mutex
	ipv6Bits int // the prefix an IPv6 caller counts by; 0 means DefaultTrialIPv6Prefix
	entries  map[string]*memEntry
	paid     memBudget
	other    memBudget
	leases   uint64 // leases handed out
}

// memBudget is one budget of a MemoryIdempotencyStore.
type memBudget struct {
	pinned  bool      // entries go only by expiry or their own caller's traffic
	order   list.List // of *memEntry, oldest reservation first
	callers map[string]*callerList
	largest callerHeap // the callers, the one holding the most first
	bytes   int64
}

// callerList holds the entries of one caller in a budget, oldest first.
type callerList struct {
	entries list.List // of *memEntry
	bytes   int64     // the entries' sizes
	i       int       // index in the budget's heap
}

// callerHeap orders a budget's callers by how many entries each holds, so
// that finding the caller holding the most costs nothing and keeping the
// order costs O(log callers) per entry added or removed (container/heap).
type callerHeap []*callerList

func (h callerHeap) Len() int           { return len(h) }
func (h callerHeap) Less(i, j int) bool { return h[i].entries.Len() > h[j].entries.Len() }
func (h callerHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i]; h[i].i = i; h[j].i = j }
func (h *callerHeap) Push(x any)        { c := x.(*callerList); c.i = len(*h); *h = append(*h, c) }
func (h *callerHeap) Pop() any {
	old := *h
	c := old[len(old)-1]
	*h = old[:len(old)-1]
	return c
}

type memEntry struct {
	key, caller  string
	fingerprint  string
	lease        string
	expires      time.Time
	resp         *StoredResponse // nil while in flight
	done         chan struct{}
	size         int64 // bytes counted in its budget
	budget       *memBudget
	el, callerEl *list.Element
}

// Reserve implements [IdempotencyStore].
func (s *MemoryIdempotencyStore) Reserve(_ context.Context, key, fingerprint string, now, expires time.Time) (IdempotencyEntry, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.entries == nil {
		s.entries = make(map[string]*memEntry)
		s.paid = memBudget{pinned: true, callers: make(map[string]*callerList)}
		s.other = memBudget{callers: make(map[string]*callerList)}
	}
	s.paid.expire(s, now)
	s.other.expire(s, now)
	if e, ok := s.entries[key]; ok {
		if e.resp != nil {
			return IdempotencyEntry{State: IdempotencyCompleted, Fingerprint: e.fingerprint, Response: e.resp}, nil
		}
		return IdempotencyEntry{State: IdempotencyInFlight, Fingerprint: e.fingerprint, Done: e.done}, nil
	}
	b, scoped := &s.other, key
	if rest, paid := strings.CutPrefix(key, paidKeyPrefix); paid {
		b, scoped = &s.paid, rest
	}
	caller := fairstore.OwnerOf(callerOf(scoped), cmp.Or(s.ipv6Bits, DefaultTrialIPv6Prefix))
	size := int64(len(key)+len(fingerprint)) + memEntryOverhead
	if !s.makeRoom(b, caller, size) {
		return IdempotencyEntry{}, problem.New(http.StatusServiceUnavailable, problem.CodeUnavailable,
			"too many requests kept with an Idempotency-Key; retry later")
	}
	s.leases++
	e := &memEntry{key: key, caller: caller, fingerprint: fingerprint, lease: strconv.FormatUint(s.leases, 10),
		expires: expires, done: make(chan struct{}), size: size, budget: b}
	e.el = b.order.PushBack(e)
	l := b.callers[caller]
	if l == nil {
		l = new(callerList)
		b.callers[caller] = l
		heap.Push(&b.largest, l)
	}
	e.callerEl = l.entries.PushBack(e)
	heap.Fix(&b.largest, l.i)
	l.bytes += size
	b.bytes += size
	s.entries[key] = e
	return IdempotencyEntry{State: IdempotencyReserved, Lease: e.lease}, nil
}

// Complete implements [IdempotencyStore].
func (s *MemoryIdempotencyStore) Complete(_ context.Context, key, lease string, resp *StoredResponse, _ time.Time) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.entries[key]; ok && e.resp == nil && e.lease == lease {
		e.resp = resp
		grow := int64(len(resp.ContentType) + len(resp.Body))
		e.size += grow
		e.budget.bytes += grow
		e.budget.callers[e.caller].bytes += grow
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

// lookup reports the entry that holds key, as Reserve would, and whether
// one does, without reserving key when none does: Reserve would make room
// for a new entry, dropping its caller's oldest answers, and the Server
// looks up a paid answer (paidReplayer.ServeReplay) for a request that
// may store nothing.
func (s *MemoryIdempotencyStore) lookup(key string, now time.Time) (IdempotencyEntry, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	e, ok := s.entries[key]
	switch {
	case !ok:
		return IdempotencyEntry{}, false
	case e.resp == nil:
		return IdempotencyEntry{State: IdempotencyInFlight, Fingerprint: e.fingerprint, Done: e.done}, true
	case !now.Before(e.expires):
		return IdempotencyEntry{}, false
	}
	return IdempotencyEntry{State: IdempotencyCompleted, Fingerprint: e.fingerprint, Response: e.resp}, true
}

// Len returns the count of entries kept, in flight or completed.
func (s *MemoryIdempotencyStore) Len() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.entries)
}

// Bytes returns the bytes counted against MaxBytes in both budgets.
func (s *MemoryIdempotencyStore) Bytes() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.paid.bytes + s.other.bytes
}

// remove forgets e.
func (s *MemoryIdempotencyStore) remove(e *memEntry) {
	b := e.budget
	b.order.Remove(e.el)
	l := b.callers[e.caller]
	l.entries.Remove(e.callerEl)
	l.bytes -= e.size
	if l.entries.Len() == 0 {
		delete(b.callers, e.caller)
		heap.Remove(&b.largest, l.i)
	} else {
		heap.Fix(&b.largest, l.i)
	}
	b.bytes -= e.size
	delete(s.entries, e.key)
}

// expire drops completed entries whose time has passed, oldest first,
// stopping at the first entry still current (a Server uses one window, so
// later reservations expire later). In-flight entries stay until released
// or completed: their holder is still running.
func (b *memBudget) expire(s *MemoryIdempotencyStore, now time.Time) {
	for el := b.order.Front(); el != nil; {
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
