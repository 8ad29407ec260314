package x402

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/vouchkit/vouch/internal/fairstore"
)

// DefaultPaymentIDsMaxEntries bounds a [MemoryPaymentIDs] whose
// MaxEntries is zero.
const DefaultPaymentIDsMaxEntries = 100_000

// DefaultPaymentIDsMaxInFlightPerPayer bounds a [MemoryPaymentIDs] whose
// MaxInFlightPerPayer is zero.
const DefaultPaymentIDsMaxInFlightPerPayer = 1000

// DefaultPaymentIDsMaxBytes bounds the bytes of the responses a
// [MemoryPaymentIDs] whose MaxBytes is zero keeps.
const DefaultPaymentIDsMaxBytes = 32 << 20

// paymentIDOverhead is about what a kept response costs beyond its id,
// request digest and body: the entry, its map slot, headers and
// settlement.
const paymentIDOverhead = 512

// ErrPaymentIDsFull: a MemoryPaymentIDs holds as many ids as it may.
var ErrPaymentIDsFull = errors.New("x402: payment id store full")

// MemoryPaymentIDs is a [PaymentIDStore] in memory, for one process. It
// forgets an id at its until, and keeps payers apart: the payer of an id
// is what precedes its last '/' ([Middleware] keeps a payment's id behind
// the payer its payload names, as "payer/id"), and the ids that name none
// count as one payer's. It holds two budgets.
//
// The ids whose first request still runs are never forgotten before
// their until (the lease Begin was given), whatever else arrives: it holds at most
// MaxInFlightPerPayer of them of one payer and MaxEntries in all, and
// beyond either bound Begin fails with [ErrPaymentIDsFull] (the
// middleware answers 503, before anything is charged). A payer with many
// requests running so has its own new ids refused, not another's.
//
// The responses kept are at most MaxEntries and MaxBytes bytes: when they
// are full, the responses of the payer holding the most (the most
// responses when their count is full, the most bytes when their bytes are
// over) are forgotten, the one expiring first each time, a payer's own
// first when it holds as much as any other: one payer's payments, however
// many, forget another's response only once it holds as much as that
// other, and a payer that holds none always has room for one. A response
// larger than MaxBytes is not kept: Finish forgets its id and fails with
// ErrPaymentIDsFull. The retry of a payment whose response was forgotten
// or not kept is answered as a repeat of a used proof, never charged
// again. Expired responses are dropped as new ones arrive.
//
// Its zero value is ready to use; set its bounds before first use. It
// must not be copied after first use.
type MemoryPaymentIDs struct {
	// MaxEntries bounds the ids whose first request runs, and apart
	// from them the responses kept; zero means
	// DefaultPaymentIDsMaxEntries.
	MaxEntries int
	// MaxInFlightPerPayer bounds the ids of one payer whose first
	// request runs; zero means DefaultPaymentIDsMaxInFlightPerPayer.
	MaxInFlightPerPayer int
	// MaxBytes bounds the bytes of the responses kept, about 512 a
	// response beyond its id and body; zero means
	// DefaultPaymentIDsMaxBytes.
	MaxBytes int64

	mu       sync.Mutex
	running  map[string]runningPaymentID // the ids whose first request runs
	inFlight map[string]int              // how many of them each payer has
	kept     fairstore.Store[PaymentIDRecord]
	now      time.Time // the latest Begin's now, by which Finish expires responses
}

// runningPaymentID is an id whose first request runs.
type runningPaymentID struct {
	request, payer string
	until          time.Time
}

// payerOf returns the payer of the id id: what precedes its last '/'.
func payerOf(id string) string {
	if i := strings.LastIndexByte(id, '/'); i >= 0 {
		return id[:i]
	}
	return ""
}

// land forgets id, held as running; m.mu is held.
func (m *MemoryPaymentIDs) land(id string, r runningPaymentID) {
	delete(m.running, id)
	if m.inFlight[r.payer]--; m.inFlight[r.payer] <= 0 {
		delete(m.inFlight, r.payer)
	}
}

// Begin implements [PaymentIDStore].
func (m *MemoryPaymentIDs) Begin(ctx context.Context, id, request string, now, until time.Time) (PaymentIDRecord, bool, error) {
	if err := ctx.Err(); err != nil {
		return PaymentIDRecord{}, false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if now.After(m.now) {
		m.now = now
	}
	if r, ok := m.running[id]; ok {
		if now.Before(r.until) {
			return PaymentIDRecord{Request: r.request}, false, nil
		}
		m.land(id, r)
	}
	if rec, ok := m.kept.Get(id, now); ok {
		return rec, false, nil
	}
	payer := payerOf(id)
	if n, limit := m.inFlight[payer], cmp.Or(m.MaxInFlightPerPayer, DefaultPaymentIDsMaxInFlightPerPayer); n >= limit {
		return PaymentIDRecord{}, false, fmt.Errorf("%w: payer %q has %d payment ids whose first request runs, MaxInFlightPerPayer %d", ErrPaymentIDsFull, payer, n, limit)
	}
	if limit := cmp.Or(m.MaxEntries, DefaultPaymentIDsMaxEntries); len(m.running) >= limit {
		return PaymentIDRecord{}, false, fmt.Errorf("%w: %d payment ids whose first request runs, MaxEntries %d", ErrPaymentIDsFull, len(m.running), limit)
	}
	m.kept.Delete(id) // its response, expired
	if m.running == nil {
		m.running = make(map[string]runningPaymentID)
		m.inFlight = make(map[string]int)
	}
	m.running[id] = runningPaymentID{request: request, payer: payer, until: until}
	m.inFlight[payer]++
	return PaymentIDRecord{Request: request}, true, nil
}

// Finish implements [PaymentIDStore].
func (m *MemoryPaymentIDs) Finish(ctx context.Context, id string, until, keep time.Time, r PaymentIDRecord) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	run, ok := m.running[id]
	if !ok || !run.until.Equal(until) {
		return nil
	}
	m.land(id, run)
	r.Done = true
	size := int64(len(id)+len(r.Request)+len(r.Response.Body)) + paymentIDOverhead
	limit := cmp.Or(m.MaxBytes, DefaultPaymentIDsMaxBytes)
	e := fairstore.Entry[PaymentIDRecord]{Key: id, Owner: run.payer, Value: r, Until: keep, Size: size}
	if !m.kept.Put(m.now, e, cmp.Or(m.MaxEntries, DefaultPaymentIDsMaxEntries), limit) {
		return fmt.Errorf("%w: a response of %d bytes is larger than MaxBytes %d; payment id %q is forgotten", ErrPaymentIDsFull, size, limit, id)
	}
	return nil
}

// Release implements [PaymentIDStore].
func (m *MemoryPaymentIDs) Release(ctx context.Context, id string, until time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if r, ok := m.running[id]; ok && r.until.Equal(until) {
		m.land(id, r)
	}
	return nil
}
