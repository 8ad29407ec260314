package receipt

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"golang.org/x/mod/sumdb/tlog"

	"github.com/vouchkit/vouch/internal/fairstore"
)

// Record is a stored receipt: the exact bytes that were issued, and the
// facts that govern lookup kept beside them, so that a store can sweep and
// authorize without decoding the receipt.
type Record struct {
	// ID is the receipt_id.
	ID string
	// Data is the receipt JSON exactly as issued and signed (RFC 8785
	// canonical form). A store returns these bytes unchanged.
	Data []byte
	// Owner is the integration that made the call.
	Owner string
	// Visibility is the receipt's effective visibility.
	Visibility Visibility
	// Counterparties may also fetch a shared receipt.
	Counterparties []string
	// ExpiresAt ends the retention: from this instant on, the record is
	// never returned. The Issuer writes whole milliseconds; a store may
	// keep it to the microsecond.
	ExpiresAt time.Time
	// LogIndex is the receipt's leaf index in the store's transparency
	// log, set by Get of a store that keeps one (a [LogReader]); -1 for a
	// receipt stored before its store kept a log, and for a store that
	// keeps none. Put ignores it.
	LogIndex int64
}

// Validate reports whether r can be stored: it needs an ID, data, an owner
// and an expiry in the years 1 to 9999 (bbolt's microseconds since 1970
// and PostgreSQL's timestamptz end a few centuries beyond, each at its
// own year), and its ID, owner and counterparties must be valid UTF-8
// without NUL, names every store keeps as given (PostgreSQL's text holds
// no other). Store implementations call it first in Put.
func (r *Record) Validate() error {
	switch {
	case r.ID == "":
		return errors.New("receipt: record has no ID")
	case !keepableName(r.ID):
		return fmt.Errorf("receipt: record ID %q is not valid UTF-8 without NUL", r.ID)
	case len(r.Data) == 0:
		return fmt.Errorf("receipt: record %s has no data", r.ID)
	case r.Owner == "":
		return fmt.Errorf("receipt: record %s has no owner", r.ID)
	case !keepableName(r.Owner):
		return fmt.Errorf("receipt: record %s: owner %q is not valid UTF-8 without NUL", r.ID, r.Owner)
	case r.ExpiresAt.IsZero():
		return fmt.Errorf("receipt: record %s has no expiry", r.ID)
	case r.ExpiresAt.UTC().Year() < 1 || r.ExpiresAt.UTC().Year() > 9999:
		return fmt.Errorf("receipt: record %s: expiry %s lies outside the years 1 to 9999, which every store keeps", r.ID, r.ExpiresAt.UTC().Format(time.RFC3339))
	}
	for i, c := range r.Counterparties {
		if !keepableName(c) {
			return fmt.Errorf("receipt: record %s: counterparty %d, %q, is not valid UTF-8 without NUL", r.ID, i, c)
		}
	}
	return nil
}

// keepableName reports whether s is valid UTF-8 without NUL.
func keepableName(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsRune(s, 0)
}

// Store keeps receipts for their retention. [MemStore] is the in-memory
// one; the boltstore package holds a durable one, and receipttest checks
// any implementation against the same suite.
//
// Time is an argument, never read from a clock: a record is live while
// now is before its ExpiresAt.
//
// Implementations must be safe for concurrent use and must not keep or
// modify the Record or slices passed to Put, nor hand out slices they
// keep. A Put that returned nil is durable as far as the store promises
// (for MemStore, the life of the process). Each method returns ctx's error
// if ctx is done before it starts.
type Store interface {
	// Put stores rec. It returns an error from rec.Validate for an
	// incomplete record, and an error wrapping ErrDuplicate if a record
	// with rec.ID is already stored (live or not yet swept); the stored
	// one is kept.
	Put(ctx context.Context, rec Record) error
	// Get returns the record with id if it is live at now, and an error
	// wrapping ErrNotFound if there is none or it has expired.
	Get(ctx context.Context, id string, now time.Time) (Record, error)
	// DeleteExpired removes every record expired at now and returns how
	// many it removed.
	DeleteExpired(ctx context.Context, now time.Time) (int, error)
}

// MemStore is a Store in memory, lost when the process ends. The zero
// MemStore is empty and ready to use; it must not be copied after first
// use. Expired records are never returned; call DeleteExpired (or run
// [Sweep]) to free their memory.
//
// It is bounded by size as well as by retention: beyond MaxRecords
// records, or MaxBytes bytes of receipt data, Put forgets records of the
// owner holding the most (the most records when their count is full, the
// most bytes when their bytes are over), the one expiring first each
// time, as if it had expired; Get answers ErrNotFound for them. Owners
// are kept apart: one integration's calls, however many, forget another's
// receipts only once it holds as much as that other, and an owner that
// holds none always has room for one. An anonymous caller named by an
// IPv6 address ("ip:<address>") counts as its /64 with every other
// address of that prefix, so that one machine taking a new address for
// each call is one owner, not many. Their leaves stay in the log,
// which MemStore keeps in memory too (see [LogReader]): two hashes, 64
// bytes, for every receipt it ever stored. A store that must keep every
// receipt for its retention is a durable one (boltstore, pgstore).
type MemStore struct {
	// MaxRecords bounds the records kept; zero means
	// DefaultMemStoreMaxRecords. Set it before first use.
	MaxRecords int
	// MaxBytes bounds the bytes of the receipts kept (their Data); zero
	// means DefaultMemStoreMaxBytes. Set it before first use.
	MaxBytes int64

	mu   sync.RWMutex // orders Puts, and guards log
	recs fairstore.Store[Record]
	log  memLog
}

// Bounds of a zero [MemStore].
const (
	DefaultMemStoreMaxRecords       = 50000
	DefaultMemStoreMaxBytes   int64 = 32 << 20
)

// Put stores a copy of rec, forgetting records of the owner holding the
// most when the store is at its bounds. A record larger than MaxBytes is
// refused.
func (s *MemStore) Put(ctx context.Context, rec Record) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := rec.Validate(); err != nil {
		return err
	}
	maxRecords, maxBytes := cmp.Or(s.MaxRecords, DefaultMemStoreMaxRecords), cmp.Or(s.MaxBytes, DefaultMemStoreMaxBytes)
	if int64(len(rec.Data)) > maxBytes {
		return fmt.Errorf("receipt: record %s is %d bytes, above the store's bound of %d", rec.ID, len(rec.Data), maxBytes)
	}
	if maxRecords < 1 { // refused before it is a leaf of the log
		return fmt.Errorf("receipt: record %s not kept: MaxRecords %d holds none", rec.ID, maxRecords)
	}
	rec = clone(rec)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.recs.Has(rec.ID) {
		return fmt.Errorf("%w: %s", ErrDuplicate, rec.ID)
	}
	idx, err := s.log.append(rec.Data)
	if err != nil {
		return err
	}
	rec.LogIndex = idx
	// Put at the zero time: expired records stay until DeleteExpired, and
	// go first when room is made.
	if !s.recs.Put(time.Time{}, fairstore.Entry[Record]{Key: rec.ID, Owner: fairstore.OwnerOf(rec.Owner, fairstore.IPv6OwnerBits), Value: rec, Until: rec.ExpiresAt, Size: int64(len(rec.Data))}, maxRecords, maxBytes) {
		return fmt.Errorf("receipt: record %s not kept: MaxRecords %d holds none", rec.ID, maxRecords)
	}
	return nil
}

// LogSize returns the number of receipts in the log.
func (s *MemStore) LogSize(ctx context.Context) (int64, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.log.size, nil
}

// ReadLogHashes returns the log's stored hashes at indexes.
func (s *MemStore) ReadLogHashes(ctx context.Context, indexes []int64) ([]tlog.Hash, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.log.read(indexes)
}

// Get returns a copy of the record with id if it is live at now.
func (s *MemStore) Get(ctx context.Context, id string, now time.Time) (Record, error) {
	if err := ctx.Err(); err != nil {
		return Record{}, err
	}
	rec, ok := s.recs.Get(id, now)
	if !ok {
		return Record{}, ErrNotFound
	}
	return clone(rec), nil
}

// DeleteExpired removes the records expired at now.
func (s *MemStore) DeleteExpired(ctx context.Context, now time.Time) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	return s.recs.DropExpired(now), nil
}

func clone(r Record) Record {
	r.Data = slices.Clone(r.Data)
	r.Counterparties = slices.Clone(r.Counterparties)
	return r
}

// Sweep calls s.DeleteExpired every interval, at the time now returns (nil
// means time.Now), until ctx is done, and then returns ctx's error. An
// error from DeleteExpired does not stop it; it is passed to onError if
// that is not nil. Run it in its own goroutine.
func Sweep(ctx context.Context, s Store, every time.Duration, now func() time.Time, onError func(error)) error {
	if every <= 0 {
		return fmt.Errorf("receipt: sweep interval must be positive, got %v", every)
	}
	if now == nil {
		now = time.Now
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
			if _, err := s.DeleteExpired(ctx, now()); err != nil && onError != nil && ctx.Err() == nil {
				onError(err)
			}
		}
	}
}
