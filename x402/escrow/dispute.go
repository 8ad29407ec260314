package escrow

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"math/big"
	"strings"
	"sync"
	"time"

	"github.com/vouchkit/vouch/x402"
)

// A RefundPolicy is a seller's policy for disputes: given a
// captured payment whose answer its buyer proved wrong, it returns how
// much of it to refund ("" or "0" for nothing). It must not return more
// than the payment can still refund (Captured less Refunded): such an
// amount is refused with [x402.ErrEscrowAmount] and nothing is sent.
// [RefundWhole] is one.
type RefundPolicy func(ctx context.Context, p x402.EscrowPayment) (amount string, err error)

// RefundWhole is the [RefundPolicy] that refunds all that a
// disputed payment can still refund.
func RefundWhole(_ context.Context, p x402.EscrowPayment) (string, error) {
	c, err := parseAmount(p.Captured)
	if err != nil {
		return "", err
	}
	r, err := parseAmount(p.Refunded)
	if err != nil {
		return "", err
	}
	return c.Sub(c, r).String(), nil
}

// DisputeKey is the key under which [Disputes] records a
// dispute's refund in the ledger: one per payment, unless the escrow
// refused it and another refund of the payment succeeded since the
// attempt before it (or the capture) was recorded, before the refusal
// or after it; the next attempt is then recorded under DisputeKey
// followed by its number ("refund-dispute-2").
const DisputeKey = "refund-dispute"

// DefaultDisputeCalls bounds the calls an [Disputes]
// remembers of one caller when its MaxCalls is zero or negative.
const DefaultDisputeCalls = 10_000

// Errors of [Disputes.Report].
var (
	// ErrUnknownCall: no escrowed payment is remembered for the
	// caller's call.
	ErrUnknownCall = errors.New("escrow: no escrowed payment is remembered for the caller's call")
	// ErrRefundExpired: the payment's refund deadline has passed.
	ErrRefundExpired = errors.New("escrow: the payment's refund deadline has passed")
	// ErrCapturePending: the payment is still held, its capture not
	// finished (decided and not answered, or its verdict not yet
	// recorded); report again once it is.
	ErrCapturePending = errors.New("escrow: the payment's capture is not finished; report again later")
)

// Disputes turns a later outcome report that proves a captured
// answer wrong into a refund of the payment that bought it, by the
// seller's Policy, through the facilitator: never automatic unless
// configured (a nil Policy refunds nothing), never above what was
// captured and not refunded, once per payment (the refund is recorded
// under [DisputeKey], and a second report replays it, refused or not,
// unless another refund of the payment succeeded while a refusal was
// on its way or after it), and
// only before the payment's refund deadline.
//
// A call is named by its caller and an id (a trace id, a receipt id):
// the route records, with [Disputes.Paid], which captured payment
// a call's ids belong to, and the seller passes its outcome reports to
// [Disputes.Report] (as it passes them to trust.Service.Feedback,
// which checks that the report comes from the call's caller). Only the
// call's caller may dispute it: another caller's report on the same id
// finds nothing. The calls are remembered in memory, each caller's
// apart: the latest MaxCalls of a caller, for Retention, so that one
// caller's calls never push out another's; the payments and their
// refunds are in the Ledger. Servers sharing one Ledger therefore refund
// a call only on the server that recorded it with Paid: another finds
// nothing (ErrUnknownCall), though it may take the same report for the
// call's reputation.
//
// Its zero value is not usable: Ledger, Facilitator and Authorizer are
// required. It is safe for concurrent use.
type Disputes struct {
	// Ledger, Facilitator and Authorizer are the route's.
	Ledger      x402.EscrowLedger
	Facilitator x402.Facilitator
	Authorizer  x402.EscrowAuthorizer
	// Policy decides each refund; nil refunds nothing.
	Policy RefundPolicy
	// MaxCalls bounds the calls remembered of one caller; zero or
	// negative means DefaultDisputeCalls. When a caller's are full, its
	// oldest is forgotten.
	MaxCalls int
	// Retention is how long a call is remembered, which need not exceed
	// the route's capture and refund windows (no refund is sent after
	// the refund deadline); zero means DefaultCaptureWindow plus
	// DefaultRefundWindow.
	Retention time.Duration
	// Now returns the current time; nil means time.Now.
	Now func() time.Time

	mu        sync.Mutex
	seq       uint64
	calls     map[disputeCall]disputeRecord
	callers   map[string]*callerCalls
	aging     []disputeSlot // every record, oldest first, from head
	head      int
	refunding map[string]chan struct{} // the payments a report refunds, closed when it is done
}

type disputeCall struct{ caller, id string }

// disputeRecord is the payment a call was paid by, and the record's
// sequence number, which its slots name.
type disputeRecord struct {
	payment string
	seq     uint64
}

// disputeSlot names one record; a slot whose record was replaced or
// forgotten names nothing.
type disputeSlot struct {
	k   disputeCall
	seq uint64
	at  time.Time
}

// callerCalls are one caller's records, oldest at next once full.
type callerCalls struct {
	slots []disputeSlot
	next  int
	live  int
}

func (d *Disputes) now() time.Time {
	if d.Now != nil {
		return d.Now()
	}
	return time.Now()
}

// forget drops the record s names, if it still names one.
func (d *Disputes) forget(s disputeSlot) {
	r, ok := d.calls[s.k]
	if !ok || r.seq != s.seq {
		return
	}
	delete(d.calls, s.k)
	if c := d.callers[s.k.caller]; c != nil {
		if c.live--; c.live == 0 {
			delete(d.callers, s.k.caller)
		}
	}
}

// expire forgets the records older than the retention.
func (d *Disputes) expire(now time.Time) {
	keep := cmp.Or(d.Retention, x402.DefaultCaptureWindow+x402.DefaultRefundWindow)
	for d.head < len(d.aging) && now.Sub(d.aging[d.head].at) > keep {
		d.forget(d.aging[d.head])
		d.aging[d.head] = disputeSlot{}
		d.head++
	}
	if d.head > len(d.aging)/2 {
		d.aging = append(d.aging[:0], d.aging[d.head:]...)
		d.head = 0
	}
}

// PaymentOf returns the id of the escrowed payment that pays for
// the request whose context is ctx, inside [x402.Middleware] on an
// "auth-capture" route, as a the route's authorizer a names it; false
// elsewhere.
func PaymentOf(ctx context.Context, a x402.EscrowAuthorizer) (string, bool) {
	vp, ok := x402.PaymentFromContext(ctx)
	if !ok || vp.Payload == nil || vp.Offer.Scheme != x402.SchemeAuthCapture {
		return "", false
	}
	p, err := a.Hold(vp.Offer, vp.Payload.Payload)
	if err != nil {
		return "", false
	}
	return p.ID, true
}

// Paid remembers that the call caller made, named by each of ids (empty
// ones skipped), was bought by the escrowed payment payment, once it was
// captured: a call whose hold was voided cost its payer nothing and has
// nothing to dispute. A caller's records push out only its own.
func (d *Disputes) Paid(caller, payment string, ids ...string) {
	now := d.now()
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.calls == nil {
		d.calls = make(map[disputeCall]disputeRecord)
		d.callers = make(map[string]*callerCalls)
	}
	d.expire(now)
	limit := d.MaxCalls
	if limit <= 0 {
		limit = DefaultDisputeCalls
	}
	for _, id := range ids {
		if id == "" {
			continue
		}
		k := disputeCall{caller, id}
		d.seq++
		slot := disputeSlot{k: k, seq: d.seq, at: now}
		c := d.callers[caller]
		if c == nil {
			c = &callerCalls{}
			d.callers[caller] = c
		}
		if len(c.slots) < limit {
			c.slots = append(c.slots, slot)
		} else {
			d.forget(c.slots[c.next])
			if d.callers[caller] == nil { // its last record went
				d.callers[caller] = c
			}
			c.slots[c.next] = slot
			c.next = (c.next + 1) % len(c.slots)
		}
		if _, ok := d.calls[k]; !ok {
			c.live++
		}
		d.calls[k] = disputeRecord{payment: payment, seq: d.seq}
		d.aging = append(d.aging, slot)
	}
	d.compact()
}

// compact drops from the aging queue the slots whose record was replaced
// or forgotten (a caller's own calls pushing out its oldest), once they
// outnumber the live ones, so that the queue holds at most about twice
// the records remembered, however many calls a caller makes within the
// retention. Its cost is amortized over the Paid calls that added them.
func (d *Disputes) compact() {
	if len(d.aging)-d.head <= 2*len(d.calls)+minCompact {
		return
	}
	live := d.aging[:0]
	for _, s := range d.aging[d.head:] {
		if r, ok := d.calls[s.k]; ok && r.seq == s.seq {
			live = append(live, s)
		}
	}
	clear(d.aging[len(live):])
	d.aging, d.head = live, 0
}

// minCompact is how many dead slots the aging queue may hold beyond
// twice the live ones before it is compacted.
const minCompact = 64

// Report takes an outcome report on the call caller made under id: when
// right is false and the call was paid by an escrowed payment, the
// payment is refunded by the Policy, once. It returns the refund's
// outcome as the ledger keeps it, and whether the refund moved money:
// false when nothing was refunded (right is true, the Policy is nil or
// refunds nothing, the payment was never captured (its verdict voids
// it, or the facilitator refused its capture for good), or the
// facilitator refused the refund for good, which the outcome's
// settlement then names). A later report sends nothing and returns the same: the outcome
// recorded (its At says when the refund happened) and whether it moved
// money; a report that comes while another refunds the same payment
// waits for it (or for ctx to end) and returns its outcome, the Policy
// asked once. It fails with [ErrUnknownCall] when no
// payment is remembered for the call, [ErrCapturePending] while the
// payment is held with a capture decided and not answered (which a
// retry or a recovery sends again) or no verdict yet, [ErrRefundExpired] after the
// refund deadline, and with the ledger's errors ([x402.ErrEscrowAmount] for a
// policy asking above what is refundable), sending nothing in each case;
// and with [x402.ErrEscrowRetryLater] when the facilitator refused the refund
// for a reason that may pass (nothing is recorded, and a later report
// sends it again). When the facilitator did not answer, or the ledger
// could not record its answer, Report fails with that error and records
// nothing, though the refund may have moved money: a later report sends
// the same refund again, which the facilitator answers as the first, and
// records it.
func (d *Disputes) Report(ctx context.Context, caller, id string, right bool) (x402.EscrowOutcome, bool, error) {
	d.mu.Lock()
	d.expire(d.now())
	rec, ok := d.calls[disputeCall{caller, id}]
	d.mu.Unlock()
	payment := rec.payment
	if !ok {
		return x402.EscrowOutcome{}, false, fmt.Errorf("%w: %q", ErrUnknownCall, id)
	}
	if right || d.Policy == nil {
		return x402.EscrowOutcome{}, false, nil
	}
	// One report at a time decides and sends a payment's refund: another
	// would ask the Policy again and send a refund against the escrow
	// balances the first is changing, which the escrow refuses; recorded
	// before the first's outcome, that refusal would stand as the
	// dispute's outcome while the first refund moved money.
	done, err := d.lockRefund(ctx, payment)
	if err != nil {
		return x402.EscrowOutcome{}, false, err
	}
	defer done()
	p, err := d.Ledger.Get(ctx, payment)
	if err != nil {
		return x402.EscrowOutcome{}, false, err
	}
	key, o, ok := disputeAttempt(p)
	if ok {
		return o, o.Settlement.Success, nil
	}
	_, refused := p.Outcome(x402.EscrowCapture) // a capture the facilitator refused for good is over
	switch {
	case p.State == x402.EscrowHeld && !refused && (p.Capture == "" || strings.Trim(p.Capture, "0") != ""):
		return x402.EscrowOutcome{}, false, fmt.Errorf("%w: escrow payment %s", ErrCapturePending, payment)
	case p.State != x402.EscrowCaptured && p.State != x402.EscrowRefunded:
		return x402.EscrowOutcome{}, false, nil // nothing was bought
	}
	if !d.now().Before(p.RefundDeadline) {
		return x402.EscrowOutcome{}, false, fmt.Errorf("%w: %s", ErrRefundExpired, p.RefundDeadline.UTC().Format(time.RFC3339))
	}
	amount, err := d.Policy(ctx, p)
	if err != nil {
		return x402.EscrowOutcome{}, false, err
	}
	if n, err := parseAmount(amount); err == nil && n.Sign() == 0 {
		// Sent, a refund of nothing would be refused for good, and that
		// refusal recorded as the payment's one dispute refund.
		return x402.EscrowOutcome{}, false, nil
	}
	o, _, err = x402.SettleEscrow(ctx, d.Ledger, d.Facilitator, d.Authorizer, payment, key, x402.EscrowRefund, amount)
	if err != nil {
		return x402.EscrowOutcome{}, false, err
	}
	return o, o.Settlement.Success, nil
}

// disputeAttempt returns the key under which a dispute of p sends its
// refund, or, when p's disputes are over, the outcome that ended them
// and true. The first is sent under [DisputeKey]. A refund that
// succeeded ends them, whatever refunds of p follow it. A refused refund
// ends them unless another refund of p succeeded since the attempt
// before it was recorded (since the capture, for the first), before the
// refusal was recorded or after it: the escrow may have refused it for
// the balance that refund was changing (a seller's own refund racing the
// dispute's, whichever is recorded first), and the next is sent under
// DisputeKey with the attempt's number ("refund-dispute-2").
func disputeAttempt(p x402.EscrowPayment) (key string, o x402.EscrowOutcome, over bool) {
	attempt := 0
	var last x402.EscrowOutcome
	moved := false // another refund succeeded since the last attempt
	for _, op := range p.Operations {
		switch {
		case op.Key == DisputeKey || strings.HasPrefix(op.Key, DisputeKey+"-"):
			attempt++
			last = op
			if !op.Settlement.Success && moved {
				last = x402.EscrowOutcome{} // refused against a balance changed meanwhile
			}
			moved = false
		case op.Operation == x402.EscrowRefund && op.Settlement.Success:
			moved = true
			if attempt > 0 && !last.Settlement.Success {
				last = x402.EscrowOutcome{} // refused against a balance since changed
			}
		}
	}
	if last.Key != "" {
		return "", last, true
	}
	if attempt == 0 {
		return DisputeKey, x402.EscrowOutcome{}, false
	}
	return fmt.Sprintf("%s-%d", DisputeKey, attempt+1), x402.EscrowOutcome{}, false
}

// lockRefund waits until no other report refunds payment, or ctx is
// done, and marks payment as refunded by the caller until it calls the
// function returned.
func (d *Disputes) lockRefund(ctx context.Context, payment string) (func(), error) {
	for {
		d.mu.Lock()
		busy, ok := d.refunding[payment]
		if !ok {
			if d.refunding == nil {
				d.refunding = make(map[string]chan struct{})
			}
			mine := make(chan struct{})
			d.refunding[payment] = mine
			d.mu.Unlock()
			return func() {
				d.mu.Lock()
				delete(d.refunding, payment)
				d.mu.Unlock()
				close(mine)
			}, nil
		}
		d.mu.Unlock()
		select {
		case <-busy:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// parseAmount parses a non-negative decimal amount, as the ledger does; "" is
// zero.
func parseAmount(s string) (*big.Int, error) {
	if s == "" {
		return new(big.Int), nil
	}
	if strings.Trim(s, "0123456789") != "" {
		return nil, x402.ErrInvalidAmount
	}
	n, ok := new(big.Int).SetString(s, 10)
	if !ok {
		return nil, x402.ErrInvalidAmount
	}
	return n, nil
}
