package router

import "github.com/vouchkit/vouch/internal/httpapi"

// IdempotencyStore keeps, per idempotency key, the first response to a
// request, so that the [Handler] can answer a repeat without running the
// Service again. Keys arrive already scoped by caller. Its methods:
//
//	Reserve(ctx context.Context, key, fingerprint string, now, expires time.Time) (IdempotencyEntry, error)
//	Complete(ctx context.Context, key, lease string, resp *StoredResponse, now time.Time) error
//	Release(ctx context.Context, key, lease string) error
//
// The protocol is: Reserve; on IdempotencyReserved the caller runs the
// request and then calls Complete with the response (or Release to forget
// the key, so that a repeat runs again); on IdempotencyCompleted it replays
// the stored response; on IdempotencyInFlight it waits and calls Reserve
// again. Reserve claims key for a request whose fingerprint (a digest of
// method, path and body) is given, or reports the entry that already holds
// it; a new reservation, and a response later stored under it, are
// forgotten at expires; Reserve must not block on another request's
// progress. Complete stores resp under a key reserved by this caller (the
// caller does not modify resp afterwards), and Release forgets the key,
// both only under the lease (IdempotencyEntry.Lease) of the reservation
// that still holds the key: a request whose reservation was taken over
// changes nothing. Time
// is an argument, never read from a clock, so that a store can be driven
// by tests and shared by processes.
//
// Implementations must be safe for concurrent use. [MemoryIdempotencyStore]
// is the in-process default; a shared database serves several processes.
// The type is an alias of the project's internal interface, shared with
// trust.NewHandler.
type IdempotencyStore = httpapi.IdempotencyStore

// IdempotencyState says who holds an idempotency key.
type IdempotencyState = httpapi.IdempotencyState

// The states of an idempotency key.
const (
	// IdempotencyReserved: the key is now held by the caller of Reserve,
	// which must Complete or Release it.
	IdempotencyReserved = httpapi.IdempotencyReserved
	// IdempotencyInFlight: another request holds the key and runs.
	IdempotencyInFlight = httpapi.IdempotencyInFlight
	// IdempotencyCompleted: a response is stored under the key.
	IdempotencyCompleted = httpapi.IdempotencyCompleted
)

// IdempotencyEntry is what [IdempotencyStore] Reserve found: State says
// who holds the key; Lease names a reservation just made; Fingerprint is that of the request holding it (when
// in flight or completed); Response is the stored response when completed;
// Done, when in flight, is closed once the holder completes or releases
// the key (nil means the store cannot notify and the Handler polls).
type IdempotencyEntry = httpapi.IdempotencyEntry

// StoredResponse is a response kept for replay: Status (the HTTP status
// code), ContentType (the Content-Type header) and Body.
type StoredResponse = httpapi.StoredResponse

// DefaultIdempotencyWindow is how long the Handler keeps a response for
// replay unless told otherwise.
const DefaultIdempotencyWindow = httpapi.DefaultIdempotencyWindow

// DefaultIdempotencyMaxEntries bounds each budget of a zero
// [MemoryIdempotencyStore].
const DefaultIdempotencyMaxEntries = httpapi.DefaultIdempotencyMaxEntries

// DefaultIdempotencyMaxEntriesPerCaller bounds one caller's entries in a
// zero [MemoryIdempotencyStore].
const DefaultIdempotencyMaxEntriesPerCaller = httpapi.DefaultIdempotencyMaxEntriesPerCaller

// DefaultIdempotencyMaxBytes bounds the bytes of each budget of a zero
// [MemoryIdempotencyStore].
const DefaultIdempotencyMaxBytes = httpapi.DefaultIdempotencyMaxBytes

// MemoryIdempotencyStore is an [IdempotencyStore] in process memory. It
// keeps two budgets, one for the answers of paid (x402) requests and one
// for the others, each bounded by its MaxEntries, MaxBytes and
// MaxEntriesPerCaller members (zero means DefaultIdempotencyMaxEntries,
// DefaultIdempotencyMaxBytes and DefaultIdempotencyMaxEntriesPerCaller),
// set before first use; a caller known by an IPv6 address counts by its
// /64 (in the Handler's own store, by the prefix of TrialLimit.IPv6Prefix),
// as the trial limit counts it. The traffic of one budget never evicts an
// entry of the other. Expired entries are dropped as time passes; a caller at
// its bound drops its own oldest completed entry, never another caller's.
// When the budget of unpaid answers is full, the oldest completed entry
// of the caller holding the most is dropped. A paid answer is kept only
// once its payment settled (x402.AfterSettle): one whose settlement
// failed, or that a delivery gate refused, is never kept nor counted, and
// the retry of its call runs anew. Paid answers are pinned: they
// stay until their window ends or the same payer's own later calls push
// them out, so that a payer's retry with the same proof is delivered; a
// paid request that finds the paid budget full of other payers' answers
// is refused with an *[Error] of status 503 before it runs (and before it
// is charged, when the paywall settles after the work), as is any request
// when no completed entry can go, also when the callers holding the most
// have only requests in flight: a caller holding fewer keeps its answers. Len returns the count of entries kept,
// Bytes the bytes counted against MaxBytes. The zero value is ready to
// use; it must not be copied after first use.
type MemoryIdempotencyStore = httpapi.MemoryIdempotencyStore
