package x402

import (
	"cmp"
	"context"
	"fmt"
	"time"

	"github.com/vouchkit/vouch/internal/fairstore"
)

// Bounds of a [MemoryOutcomes] whose members are zero.
const (
	// DefaultOutcomesMaxEntries bounds the outcomes kept in each budget.
	DefaultOutcomesMaxEntries = 10_000
	// DefaultOutcomesMaxBytes bounds the bytes of the responses kept in
	// each budget.
	DefaultOutcomesMaxBytes = 32 << 20
)

// outcomeOverhead is about what an outcome costs beyond its key and
// response body: the entry, its map slot, headers and settlement.
const outcomeOverhead = 512

// MemoryOutcomes is an OutcomeStore in memory, for one server process.
// Its zero value is ready to use; set its bounds before first use.
//
// Its memory is bounded whatever the payers sign: an outcome is kept
// until its time, but never longer than MaxRetention after Keep; and it
// holds three budgets, each of at most MaxEntries outcomes and MaxBytes
// bytes: the pending captures of "auth-capture" payments, delivered
// outcomes, and refusals (which no one paid for); and a fourth, as
// large, for the answers kept while their payment is settled (a pending
// capture without a Settlement, or an Unpaid answer), which their
// outcome replaces once the capture is answered or the payment settles
// (an Unpaid answer whose settlement failed waits there for its retry).
// No outcome of one budget pushes out one of another: refusals never push out a delivered outcome, and none of
// them pushes out a pending capture, whose answer is the only copy of
// what its capture may still buy. Within a budget, payers
// ([Outcome].Payer) are kept apart: when it is full, the outcomes of the
// payer holding the most (the most outcomes when their count is full,
// the most bytes when their bytes are over) are dropped, the one expiring
// first each time, a payer's own first when it holds as much as any
// other: one payer's traffic, however heavy, drops another's outcome
// only once it holds as much as that other, and a payer that holds none
// always has room for one. An outcome larger than MaxBytes is not kept:
// Keep fails (and [Middleware] does not settle a gated answer it could
// not keep). A dropped or unkept delivered outcome or refusal costs
// only its retry: the proof stays used in the [ReplayStore], so its
// retry is answered 402 "already used" instead of the kept answer or
// refusal, and nothing is settled again. A dropped pending capture costs
// more: its capture may still happen (package x402/escrow's Recovery
// sends it) while its retry is answered 402, so the payer pays for an
// answer it cannot have; only other pending captures, which are as rare
// as captures the facilitator left unanswered, push one out. Expired
// outcomes are dropped as new ones arrive.
type MemoryOutcomes struct {
	// MaxRetention is the longest an outcome is kept; zero means
	// DefaultMaxValidity. [Middleware] refuses a store that forgets
	// sooner than its MaxValidity.
	MaxRetention time.Duration
	// MaxEntries bounds the outcomes kept in each budget; zero means
	// DefaultOutcomesMaxEntries.
	MaxEntries int
	// MaxBytes bounds the bytes kept in each budget, about 512 an
	// outcome beyond its key and body; zero means
	// DefaultOutcomesMaxBytes.
	MaxBytes int64
	// Now returns the current time, by which Keep bounds an outcome's
	// until by MaxRetention and drops expired outcomes; nil means
	// time.Now. It is the clock Lookup is given: [Middleware] sets a nil
	// Now to its [MiddlewareConfig].Now when it is built, so that an
	// outcome expires by one clock.
	Now func() time.Time

	pending, capturing, delivered, refused fairstore.Store[Outcome]
}

// Keep implements OutcomeStore. An until more than MaxRetention ahead is
// cut to MaxRetention.
func (s *MemoryOutcomes) Keep(ctx context.Context, key string, o Outcome, until time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	now := s.now()
	if limit := now.Add(cmp.Or(s.MaxRetention, DefaultMaxValidity)); until.After(limit) {
		until = limit
	}
	size := int64(len(key)+len(o.Request)+len(o.Payer)+len(o.Response.Body)) + outcomeOverhead
	if o.Unpaid != nil {
		size += int64(len(o.Unpaid.Body))
	}
	maxEntries, maxBytes := cmp.Or(s.MaxEntries, DefaultOutcomesMaxEntries), cmp.Or(s.MaxBytes, DefaultOutcomesMaxBytes)
	budget := &s.delivered
	switch {
	case o.Unpaid != nil, o.PendingCapture != "" && o.Settlement == nil:
		budget = &s.capturing
	case o.PendingCapture != "":
		budget = &s.pending
	case !o.Delivered:
		budget = &s.refused
	}
	for _, other := range s.budgets() {
		if other != budget {
			other.Delete(key)
		}
	}
	if !budget.Put(now, fairstore.Entry[Outcome]{Key: key, Owner: o.Payer, Value: o, Until: until, Size: size}, maxEntries, maxBytes) {
		return fmt.Errorf("x402: MemoryOutcomes: an outcome of %d bytes is larger than MaxBytes %d", size, maxBytes)
	}
	return nil
}

func (s *MemoryOutcomes) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Lookup implements OutcomeStore.
func (s *MemoryOutcomes) Lookup(ctx context.Context, key string, now time.Time) (Outcome, bool, error) {
	if err := ctx.Err(); err != nil {
		return Outcome{}, false, err
	}
	for _, budget := range s.budgets() {
		if o, ok := budget.Get(key, now); ok {
			return o, true, nil
		}
	}
	return Outcome{}, false, nil
}

// Len returns the number of outcomes held in the budgets, expired ones
// included until a later Keep into their budget drops them.
func (s *MemoryOutcomes) Len() int {
	n := 0
	for _, budget := range s.budgets() {
		n += budget.Len()
	}
	return n
}

// budgets returns the budgets of s; a key is held in one at most.
func (s *MemoryOutcomes) budgets() []*fairstore.Store[Outcome] {
	return []*fairstore.Store[Outcome]{&s.pending, &s.capturing, &s.delivered, &s.refused}
}

// msgNotDelivered is the refusal reason of an answer a gate refused.
const msgNotDelivered = "not_delivered"
