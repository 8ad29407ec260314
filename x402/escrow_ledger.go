package x402

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/big"
	"slices"
	"sync"
	"time"
)

// EscrowState is where an "auth-capture" payment stands in its lifecycle.
type EscrowState string

// The states of an escrowed payment. A payment is recorded Held once the
// facilitator confirmed the hold; a capture makes it Captured (the rest of
// the hold, if any, is voided with it), a void Voided, and a refund of
// part or all of what was captured Refunded. Voided and Refunded take no
// further operation but a refund of what Refunded left; see
// [EscrowLedger.Record] for the transitions.
const (
	EscrowHeld     EscrowState = "held"
	EscrowCaptured EscrowState = "captured"
	EscrowVoided   EscrowState = "voided"
	EscrowRefunded EscrowState = "refunded"
)

// The operations of an escrowed payment's lifecycle after its hold, as
// [EscrowOutcome].Operation names them; they are the payload.type of the
// facilitator's settle.
const (
	EscrowCapture = "capture"
	EscrowVoid    = "void"
	EscrowRefund  = "refund"
)

// EscrowPayment is what an [EscrowLedger] keeps of one "auth-capture"
// payment: enough to finish its lifecycle on another server or after a
// restart (the offer and the payer's payload give the facilitator's
// settle payloads), and each lifecycle operation's first outcome, which a
// repeat of the operation replays instead of asking the facilitator again.
// Amounts are atomic units in decimal.
type EscrowPayment struct {
	// ID names the payment: its PaymentInfo hash, 0x hex (for EVM), as
	// the facilitator reported it in the hold's settlement.
	ID string
	// Offer is the offer the payer accepted, and Payload the payer's
	// signed payload: the settle of every operation is built from them.
	Offer   PaymentRequirements
	Payload json.RawMessage
	// Payer is the payer's address.
	Payer string
	// Amount is the hold, the most that can be captured.
	Amount string
	// HeldAt is when the hold was confirmed.
	HeldAt time.Time
	// CaptureDeadline is the last moment the hold can be captured or
	// voided; after it the payer may reclaim the hold.
	CaptureDeadline time.Time
	// RefundDeadline is the last moment a capture can be refunded.
	RefundDeadline time.Time
	// Hold is the facilitator's settlement of the hold (authorize).
	Hold SettleResponse

	// State is where the payment stands.
	State EscrowState
	// Verdict is what the server decided the payment should become, ""
	// until [EscrowLedger.Decide] recorded it: the trust verdict
	// ("VALID", "INVALID", ...) or the handler's failure ("failed"), and
	// Capture the amount to capture ("0" to void). After a restart, a
	// payment still Held is captured or voided by its recorded verdict,
	// and voided when it has none.
	Verdict string
	Capture string
	// Captured and Refunded are the amounts captured and refunded so far
	// ("0" when none).
	Captured string
	Refunded string
	// Operations are the first outcome of each operation recorded, by
	// the operation's key (see [EscrowOutcome]), in the order recorded.
	Operations []EscrowOutcome
}

// Finished reports whether the payment's lifecycle after its hold is over
// for the server: it is no longer Held.
func (p EscrowPayment) Finished() bool { return p.State != EscrowHeld }

// Outcome returns the first outcome recorded for the operation key, and
// false when none is.
func (p EscrowPayment) Outcome(key string) (EscrowOutcome, bool) {
	for _, o := range p.Operations {
		if o.Key == key {
			return o, true
		}
	}
	return EscrowOutcome{}, false
}

// EscrowOutcome is the outcome of one lifecycle operation, as the
// facilitator answered it.
type EscrowOutcome struct {
	// Key names the operation for replay. One payment has at most one
	// capture and one void, keyed "capture" and "void"; refunds are keyed
	// by the caller ("refund" for the first, say "refund-2" for another).
	Key string
	// Operation is EscrowCapture, EscrowVoid or EscrowRefund.
	Operation string
	// Amount is what the operation captured or refunded ("" for a void).
	Amount string
	// Settlement is the facilitator's answer. Only a facilitator's answer
	// is recorded, successful or not: an operation whose outcome is
	// unknown (the facilitator was unreachable) is not, and may be sent
	// again (the facilitator's lifecycle is idempotent).
	Settlement SettleResponse
	// At is when the outcome was recorded.
	At time.Time
}

// EscrowLedger keeps the lifecycle of "auth-capture" payments: the holds
// placed, the verdict that decides each, and each operation's first
// outcome. [Middleware] records a hold before the handler runs and every
// operation's outcome before it answers, and replays a recorded outcome
// instead of sending an operation twice (the scheme's security note 5);
// a server that stops between hold and verdict finds the payment in
// Unfinished when it starts again. Implementations must be safe for
// concurrent use; [MemoryEscrowLedger] serves one process, and a database
// can implement the interface for several servers and restarts. Package
// x402test's TestEscrowLedger checks an implementation.
//
// Each method is one atomic step, and a done context is reported before
// any work. Errors: [ErrEscrowUnknown] for an id never held,
// [ErrEscrowState] for an operation the payment's state does not allow,
// [ErrEscrowAmount] for an amount above what the payment allows; a
// store's own failure is any other error, and then nothing was recorded.
// Returned payments share no memory with the store. A durable ledger
// keeps a payment at least until its refund deadline has passed (a held
// one at least until its capture deadline), and times to the second at
// least. The lifecycle's transitions and amount bounds are the steps
// [EscrowPayment.Held], [EscrowPayment.Decided] and
// [EscrowPayment.Recorded], which an implementation takes on its record
// under its own lock, as [MemoryEscrowLedger] does.
type EscrowLedger interface {
	// Hold records a confirmed hold, p, in state Held with nothing
	// captured or refunded (p's State, Verdict, Capture, Captured,
	// Refunded and Operations are ignored), and returns the record. A
	// second Hold of p.ID changes nothing and returns the first record
	// with false, so that a repeated hold replays.
	Hold(ctx context.Context, p EscrowPayment) (EscrowPayment, bool, error)
	// Decide records the verdict of a payment and the amount to capture
	// ("0" voids), once: a later Decide changes nothing and returns the
	// first decision's record. It fails with ErrEscrowAmount when capture
	// is above the hold, and with ErrEscrowState when the payment, without
	// a verdict, is no longer Held (a recovery voided it).
	Decide(ctx context.Context, id, verdict, capture string) (EscrowPayment, error)
	// Record records the outcome of an operation, once per o.Key: when
	// an outcome is recorded under o.Key already, Record changes nothing
	// and returns the payment with that first outcome and false; of
	// concurrent Records of one key, exactly one reports true. A
	// successful outcome moves the payment: a capture, from Held only and
	// of at most the hold, to Captured; a void, from Held only, to
	// Voided; a refund, from Captured or Refunded and of at most what was
	// captured and not yet refunded, to Refunded. An unsuccessful outcome
	// is recorded for replay and moves nothing; the state rules hold for
	// it, the amount bounds do not (a refund refused because another,
	// recorded meanwhile, left less than it asked is recorded).
	Record(ctx context.Context, id string, o EscrowOutcome) (EscrowPayment, EscrowOutcome, bool, error)
	// Get returns the payment id.
	Get(ctx context.Context, id string) (EscrowPayment, error)
	// Unfinished returns the payments still Held, oldest hold first (by
	// HeldAt, then ID), at most limit of them (all when limit is zero or
	// less), with their verdicts: what a server that restarts captures or
	// voids by the recorded verdict (voids when there is none). Payments
	// past their capture deadline are included until the ledger forgets
	// them.
	Unfinished(ctx context.Context, limit int) ([]EscrowPayment, error)
}

// Errors of an [EscrowLedger].
var (
	// ErrEscrowUnknown: no hold is recorded under the id.
	ErrEscrowUnknown = errors.New("x402: escrow payment unknown")
	// ErrEscrowState: the payment's state does not allow the operation
	// (a capture after a void, a refund of a payment never captured).
	ErrEscrowState = errors.New("x402: escrow operation not allowed in the payment's state")
	// ErrEscrowAmount: an amount is not a decimal, or is above what the
	// payment allows (a capture above the hold, a refund above what was
	// captured and not refunded).
	ErrEscrowAmount = errors.New("x402: escrow amount above what the payment allows")
	// ErrEscrowLedgerFull: a MemoryEscrowLedger holds as many payments as
	// it may.
	ErrEscrowLedgerFull = errors.New("x402: escrow ledger full")
)

// DefaultEscrowMaxPayments bounds the payments of a [MemoryEscrowLedger]
// whose MaxPayments is zero.
const DefaultEscrowMaxPayments = 100_000

// MemoryEscrowLedger is an [EscrowLedger] in memory, for one server
// process: what it records is lost when the process ends, and with it
// the means to finish a hold (the payer reclaims it after its capture
// deadline); use a durable ledger when that matters. Its zero value is
// ready to use; set its fields before first use.
//
// Its memory is bounded: it forgets a captured or refunded payment once
// its refund deadline has passed, and a held or voided one once its
// capture deadline has passed (it can no longer change), and holds at
// most MaxPayments: when full, it forgets every voided payment (each
// cost its payer nothing, so that one payer's free calls never fill it
// for the others), and then Hold refuses a new payment with
// [ErrEscrowLedgerFull].
type MemoryEscrowLedger struct {
	// MaxPayments bounds the payments kept; zero means
	// DefaultEscrowMaxPayments.
	MaxPayments int
	// Now returns the current time; nil means time.Now.
	Now func() time.Time

	mu       sync.Mutex
	payments map[string]*EscrowPayment
}

func (m *MemoryEscrowLedger) now() time.Time {
	if m.Now != nil {
		return m.Now()
	}
	return time.Now()
}

// Hold implements [EscrowLedger].
func (m *MemoryEscrowLedger) Hold(ctx context.Context, p EscrowPayment) (EscrowPayment, bool, error) {
	if err := ctx.Err(); err != nil {
		return EscrowPayment{}, false, err
	}
	held, err := p.Held()
	if err != nil {
		return EscrowPayment{}, false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if old, ok := m.payments[p.ID]; ok {
		return old.clone(), false, nil
	}
	if m.payments == nil {
		m.payments = make(map[string]*EscrowPayment)
	}
	if len(m.payments) >= cmp.Or(m.MaxPayments, DefaultEscrowMaxPayments) {
		m.prune(m.now())
		if len(m.payments) >= cmp.Or(m.MaxPayments, DefaultEscrowMaxPayments) {
			return EscrowPayment{}, false, ErrEscrowLedgerFull
		}
	}
	m.payments[p.ID] = &held
	return held.clone(), true, nil
}

// prune forgets the payments that can no longer change: a held or
// voided one past its capture deadline, a captured or refunded one past
// its refund deadline; and, if that leaves the ledger full, every voided
// one, which cost its payer nothing and has nothing left to do.
func (m *MemoryEscrowLedger) prune(now time.Time) {
	for id, p := range m.payments {
		open := p.RefundDeadline
		if p.State == EscrowHeld || p.State == EscrowVoided {
			open = p.CaptureDeadline
		}
		if now.After(open) {
			delete(m.payments, id)
		}
	}
	if len(m.payments) < cmp.Or(m.MaxPayments, DefaultEscrowMaxPayments) {
		return
	}
	for id, p := range m.payments {
		if p.State == EscrowVoided {
			delete(m.payments, id)
		}
	}
}

// Decide implements [EscrowLedger].
func (m *MemoryEscrowLedger) Decide(ctx context.Context, id, verdict, capture string) (EscrowPayment, error) {
	if err := ctx.Err(); err != nil {
		return EscrowPayment{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.payments[id]
	if !ok {
		return EscrowPayment{}, ErrEscrowUnknown
	}
	next, _, err := p.Decided(verdict, capture)
	if err != nil {
		return EscrowPayment{}, err
	}
	*p = next
	return p.clone(), nil
}

// Record implements [EscrowLedger].
func (m *MemoryEscrowLedger) Record(ctx context.Context, id string, o EscrowOutcome) (EscrowPayment, EscrowOutcome, bool, error) {
	if err := ctx.Err(); err != nil {
		return EscrowPayment{}, EscrowOutcome{}, false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.payments[id]
	if !ok {
		return EscrowPayment{}, EscrowOutcome{}, false, ErrEscrowUnknown
	}
	next, first, fresh, err := p.Recorded(o, m.now())
	if err != nil {
		return EscrowPayment{}, EscrowOutcome{}, false, err
	}
	*p = next
	return p.clone(), first, fresh, nil
}

// apply returns p after the outcome o, or why o is not allowed. It is the
// lifecycle's state machine, shared by every ledger of this package. The
// amount bounds hold for a successful outcome only: a refusal moves
// nothing, and one of an amount that was within bounds when it was sent
// (a refund refused because another, recorded meanwhile, left less) is
// recorded as it happened.
func (p EscrowPayment) apply(o EscrowOutcome) (EscrowPayment, error) {
	var amount *big.Int
	if o.Operation != EscrowVoid {
		a, err := escrowAmount(o.Amount)
		if err != nil {
			return p, fmt.Errorf("%w: %s amount %q", ErrEscrowAmount, o.Operation, o.Amount)
		}
		amount = a
	}
	hold, _ := escrowAmount(p.Amount)
	captured, _ := escrowAmount(p.Captured)
	refunded, _ := escrowAmount(p.Refunded)
	switch o.Operation {
	case EscrowCapture:
		if p.State != EscrowHeld {
			return p, fmt.Errorf("%w: capture of a payment %s", ErrEscrowState, p.State)
		}
		if o.Settlement.Success && amount.Cmp(hold) > 0 {
			return p, fmt.Errorf("%w: capture %s of a hold of %s", ErrEscrowAmount, o.Amount, p.Amount)
		}
		if o.Settlement.Success {
			p.State, p.Captured = EscrowCaptured, amount.String()
		}
	case EscrowVoid:
		if p.State != EscrowHeld {
			return p, fmt.Errorf("%w: void of a payment %s", ErrEscrowState, p.State)
		}
		if o.Settlement.Success {
			p.State = EscrowVoided
		}
	case EscrowRefund:
		if p.State != EscrowCaptured && p.State != EscrowRefunded {
			return p, fmt.Errorf("%w: refund of a payment %s", ErrEscrowState, p.State)
		}
		left := new(big.Int).Sub(captured, refunded)
		if o.Settlement.Success && amount.Cmp(left) > 0 {
			return p, fmt.Errorf("%w: refund %s of %s refundable", ErrEscrowAmount, o.Amount, left)
		}
		if o.Settlement.Success {
			p.State, p.Refunded = EscrowRefunded, new(big.Int).Add(refunded, amount).String()
		}
	default:
		return p, fmt.Errorf("%w: unknown operation %q", ErrEscrowState, o.Operation)
	}
	return p, nil
}

// Get implements [EscrowLedger].
func (m *MemoryEscrowLedger) Get(ctx context.Context, id string) (EscrowPayment, error) {
	if err := ctx.Err(); err != nil {
		return EscrowPayment{}, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	p, ok := m.payments[id]
	if !ok {
		return EscrowPayment{}, ErrEscrowUnknown
	}
	return p.clone(), nil
}

// Unfinished implements [EscrowLedger].
func (m *MemoryEscrowLedger) Unfinished(ctx context.Context, limit int) ([]EscrowPayment, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	m.mu.Lock()
	var out []EscrowPayment
	for _, p := range m.payments {
		if p.State == EscrowHeld {
			out = append(out, p.clone())
		}
	}
	m.mu.Unlock()
	slices.SortFunc(out, func(a, b EscrowPayment) int {
		if c := a.HeldAt.Compare(b.HeldAt); c != 0 {
			return c
		}
		return cmp.Compare(a.ID, b.ID)
	})
	if limit > 0 && len(out) > limit {
		out = out[:limit]
	}
	return out, nil
}

// clone returns a copy of p that shares no memory with it.
func (p EscrowPayment) clone() EscrowPayment {
	p.Payload = slices.Clone(p.Payload)
	p.Offer.Extra = maps.Clone(p.Offer.Extra)
	p.Hold.Extensions = maps.Clone(p.Hold.Extensions)
	p.Operations = slices.Clone(p.Operations)
	return p
}

// escrowAmount parses a non-negative decimal amount; "" is zero.
func escrowAmount(s string) (*big.Int, error) {
	if s == "" {
		return new(big.Int), nil
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return nil, ErrInvalidAmount
		}
	}
	n, ok := new(big.Int).SetString(s, 10)
	if !ok {
		return nil, ErrInvalidAmount
	}
	return n, nil
}
