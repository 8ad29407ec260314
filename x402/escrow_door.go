package x402

import (
	"cmp"
	"context"
	"errors"
	"log/slog"
	"time"
)

// Escrow runs the lifecycle of "auth-capture" payments for a door that
// sells work: [Middleware] for HTTP routes, and a server that carries
// payments outside HTTP headers (the x402 MCP transport, see package
// trust/trustmcp). Its steps, in order: Offer sets the deadlines of each
// offer a payer reads; Candidates and Terms match a payment to an offer
// and accept the deadlines its payer signed; Hold places the hold and
// records it before the work runs; Decide records the verdict on the
// work; Finish captures or voids as decided and reports the outcome. Each
// operation is recorded once in the ledger, so a door that shares the
// ledger with another (or with package x402/escrow's Recovery) never
// sends one twice.
// An Escrow is safe for concurrent use.
type Escrow struct {
	cfg         EscrowConfig
	ledger      EscrowLedger
	facilitator Facilitator
	settle      time.Duration
	now         func() time.Time
	log         *slog.Logger
}

// NewEscrow returns the lifecycle of cfg, whose holds and operations f
// settles, each bounded by settleTimeout (zero means
// DefaultSettleTimeout). A nil now means time.Now; a nil log is silent.
// A nil cfg.Ledger means a new MemoryEscrowLedger. It fails without
// cfg.Authorizer or f, or with a negative window or settleTimeout.
func NewEscrow(cfg EscrowConfig, f Facilitator, settleTimeout time.Duration, now func() time.Time, log *slog.Logger) (*Escrow, error) {
	switch {
	case cfg.Authorizer == nil:
		return nil, errors.New("x402: EscrowConfig.Authorizer is nil")
	case f == nil:
		return nil, errors.New("x402: NewEscrow: the facilitator is nil")
	case cfg.CaptureWindow < 0 || cfg.RefundWindow < 0 || settleTimeout < 0:
		return nil, errors.New("x402: NewEscrow: a negative window or settle timeout")
	}
	e := &Escrow{cfg: cfg, ledger: cfg.Ledger, facilitator: f, settle: cmp.Or(settleTimeout, DefaultSettleTimeout), now: now, log: log}
	if e.ledger == nil {
		e.ledger = &MemoryEscrowLedger{Now: now}
	}
	if e.now == nil {
		e.now = time.Now
	}
	if e.log == nil {
		e.log = slog.New(slog.DiscardHandler)
	}
	return e, nil
}

// Ledger returns the ledger that records the payments.
func (e *Escrow) Ledger() EscrowLedger { return e.ledger }

// Check rejects an "auth-capture" offer of p that could not be held and
// captured in time: a price that settles before the work (SettleBefore),
// or a capture window shorter than the offer's maxTimeoutSeconds, p's
// time budget and two settlements, or longer than maxValidity (the
// longest the door remembers a payment).
func (e *Escrow) Check(p Price, maxValidity time.Duration) error {
	return checkEscrow(p, &e.cfg, e.settle, maxValidity)
}

// Offer returns o with the deadlines a payer signs now
// (extra.captureDeadline now plus the capture window, and
// extra.refundDeadline), when o is an "auth-capture" offer, and o as it
// is otherwise.
func (e *Escrow) Offer(o PaymentRequirements, now time.Time) PaymentRequirements {
	if o.Scheme != SchemeAuthCapture {
		return o
	}
	capture, refund := e.cfg.windows()
	cd := now.Add(capture).Unix()
	return withDeadlines(o, cd, cd+int64(refund/time.Second))
}

// Candidates returns the "auth-capture" offers among offers whose extra
// is accepted's (the offer a payer accepted) but for the deadlines, which
// Offer sets anew for each payer.
func (e *Escrow) Candidates(offers []PaymentRequirements, accepted PaymentRequirements) []PaymentRequirements {
	return escrowCandidates(offers, accepted)
}

// Terms returns offer, an "auth-capture" offer of price, with the
// deadlines of accepted, the offer the payer signed, or the reason to
// answer with the terms when those are not deadlines Offer could have set
// (the capture deadline within the capture window from now, and after
// price's time budget and two settlements; the refund deadline the
// refund window after it). The deadlines are read as JSON decodes them
// (float64) or as Offer sets them (int64).
func (e *Escrow) Terms(offer, accepted PaymentRequirements, price Price, now time.Time) (PaymentRequirements, string) {
	return escrowTerms(&e.cfg, e.settle, offer, accepted, price, now)
}

// Signed returns offer, an "auth-capture" offer, with the deadlines of
// accepted, the offer a payer signed, whatever they are, and false when
// they are not whole numbers of seconds. A door answers with it the
// repeat of a payment spent before, whose outcome it keeps: close to its
// capture deadline, its deadlines no longer pass Terms (they leave no
// room for new work), yet its capture may be pending until that deadline
// and its retry must get the answer the capture buys. A payment that is
// not such a repeat is refused with the reason Terms gave.
func (e *Escrow) Signed(offer, accepted PaymentRequirements) (PaymentRequirements, bool) {
	return signedTerms(offer, accepted)
}

// EscrowHoldError is why [Escrow.Hold] placed no hold that work may run
// on.
type EscrowHoldError struct {
	// Reason is the reason of the terms to answer with.
	Reason string
	// Settlement is the failed authorization, when the hold was asked for.
	Settlement *SettleResponse
	// Asked reports whether the hold was asked for: the payment then stays
	// used.
	Asked bool
	// Err is the ledger's error when the hold was placed but could not be
	// recorded (it was voided at once): the door is unavailable, the
	// payment not refused.
	Err error
}

// Error reports the ledger's error when there is one, and the reason
// otherwise.
func (e *EscrowHoldError) Error() string {
	if e.Err != nil {
		return "x402: recording a hold: " + e.Err.Error()
	}
	return "x402: " + e.Reason
}

// Unwrap returns Err, nil unless the hold could not be recorded.
func (e *EscrowHoldError) Unwrap() error { return e.Err }

// Hold places the hold that p, a verified payment of offer (with the
// deadlines of Terms) by payer, asks for, on a context detached from
// ctx's cancellation, and records it in the ledger before it returns, so
// that the work runs only on a hold confirmed and recorded. A payment
// whose hold the ledger records already (its lifecycle is another
// call's) is refused with the reason "the payment was already used". The
// error is an [*EscrowHoldError].
func (e *Escrow) Hold(ctx context.Context, p *PaymentPayload, offer PaymentRequirements, payer string) (EscrowPayment, error) {
	keep := context.WithoutCancel(ctx)
	hold, err := e.cfg.Authorizer.Hold(offer, p.Payload)
	if err != nil {
		return EscrowPayment{}, &EscrowHoldError{Reason: "invalid_auth_capture_payload: " + err.Error()}
	}
	sr := e.settleOnce(keep, p, offer, payer)
	if !sr.Success {
		return EscrowPayment{}, &EscrowHoldError{Reason: "authorization failed: " + joinReason(sr.ErrorReason, sr.ErrorMessage), Settlement: sr, Asked: true}
	}
	hold.HeldAt, hold.Hold = e.now(), *sr
	payment, fresh, err := e.ledger.Hold(keep, hold)
	switch {
	case err != nil:
		// A hold the ledger could not record is given back at once: no
		// work runs on a payment that could not be finished after a
		// restart.
		e.log.LogAttrs(ctx, slog.LevelError, "x402: recording a hold", slog.String("payment", hold.ID), slog.String("error", err.Error()))
		e.voidUnrecorded(keep, hold)
		return EscrowPayment{}, &EscrowHoldError{Reason: "escrow ledger unavailable", Asked: true, Err: err}
	case !fresh:
		return EscrowPayment{}, &EscrowHoldError{Reason: msgUsed, Asked: true}
	}
	e.log.LogAttrs(ctx, slog.LevelInfo, "x402: held", slog.String("payment", payment.ID), slog.String("amount", payment.Amount), slog.String("payer", payment.Payer))
	return payment, nil
}

// voidUnrecorded voids hold, a hold the facilitator placed and the
// ledger could not record, sending the void to the facilitator directly:
// the ledger holds no record of the payment to check the void against or
// to record its outcome in. A void that fails is logged, and the payer
// reclaims the hold after its capture deadline.
func (e *Escrow) voidUnrecorded(ctx context.Context, hold EscrowPayment) {
	hold.State, hold.Captured, hold.Refunded = EscrowHeld, "0", "0"
	payload, err := e.cfg.Authorizer.Consent(hold, EscrowVoid, "")
	var sr *SettleResponse
	if err == nil {
		sr, err = boundedSettle{e.facilitator, e.settle}.Settle(ctx, payload, hold.Offer)
	}
	switch {
	case err != nil:
		e.log.LogAttrs(ctx, slog.LevelError, "x402: voiding a hold not recorded", slog.String("payment", hold.ID), slog.String("error", err.Error()))
	case sr == nil || !sr.Success:
		reason := "the facilitator answered nothing"
		if sr != nil {
			reason = joinReason(sr.ErrorReason, sr.ErrorMessage)
		}
		e.log.LogAttrs(ctx, slog.LevelError, "x402: voiding a hold not recorded", slog.String("payment", hold.ID), slog.String("error", reason))
	default:
		e.log.LogAttrs(ctx, slog.LevelInfo, "x402: void", slog.String("payment", hold.ID), slog.Bool("success", true), slog.String("transaction", sr.Transaction))
	}
}

// Decide records the verdict on the work that the held payment paid for,
// and the amount to capture ("0" or "" to void), and returns the payment
// as decided: its first decision when it was decided before. When the
// ledger reports an error, the payment is read back: a decision it holds
// all the same (a commit whose acknowledgement was lost) is returned, as
// a recovery would act on it; a verdict the ledger did not confirm is
// returned to void, never to capture, and without the verdict (its
// [EscrowReport] names none, as none was confirmed), and the doors then
// send no answer the capture was to buy. Should that void not be sent either
// ([Escrow.Complete] reports it pending), the ledger may hold the
// verdict all the same, and a recovery capture by it: a door then keeps
// the answer for the payment's retry, as for a pending capture. A payment
// a recovery voided without a verdict while its work ran (see package
// x402/escrow's Recovery.Grace) takes no verdict: it is returned voided
// and without a verdict, to be reported as such (its [EscrowReport] names
// none), and nothing is bought.
func (e *Escrow) Decide(ctx context.Context, held EscrowPayment, verdict, capture string) EscrowPayment {
	ctx = context.WithoutCancel(ctx)
	d, err := e.ledger.Decide(ctx, held.ID, verdict, cmp.Or(capture, "0"))
	if err == nil {
		return d
	}
	e.log.LogAttrs(ctx, slog.LevelError, "x402: recording a verdict", slog.String("payment", held.ID), slog.String("error", err.Error()))
	kept, gerr := e.ledger.Get(ctx, held.ID)
	switch {
	case gerr != nil:
	case kept.Verdict != "":
		return kept
	case kept.Finished():
		// Voided without a verdict (a recovery gave up on the work): it
		// is finished as it stands, its void replayed, and reported, as
		// the ledger holds it, without a verdict.
		kept.Capture = "0"
		return kept
	}
	// Void what cannot be recorded, and report no verdict: the ledger
	// confirmed none, and the void is not the verdict's doing.
	d = held
	d.Verdict, d.Capture = "", "0"
	return d
}

// Finish captures the decided payment d (what Decide returned) or voids
// it when it captures nothing, each operation sent once, and returns the
// payment response with the [EscrowReport] in its extensions (and u, the
// usage, on a capture that succeeded: a failed one charged nothing), and
// whether the work was bought: true only for a capture that succeeded. A
// capture that failed leaves the hold until it is voided or reclaimed.
//
// A capture that did not succeed and whose outcome was not recorded (the
// facilitator did not answer, or refused for a reason that may pass) may
// still happen: package x402/escrow's Recovery sends it again. A door
// that holds the answer back then keeps it for the payment's retry (see
// [Escrow.Complete]).
func (e *Escrow) Finish(ctx context.Context, d EscrowPayment, u *Usage) (SettleResponse, bool) {
	sr, bought, _ := e.Complete(ctx, d, u)
	return sr, bought
}

// Complete is [Escrow.Finish], and also reports whether the operation,
// capture or void, is pending: it did not succeed and the ledger records
// no outcome of it (the facilitator did not answer, or refused for a
// reason that may pass), so the payment stays held, to be finished by a
// retry's Complete or by package x402/escrow's Recovery as the verdict
// the ledger holds says. A door keeps the answer of a pending capture
// (and of a pending void of a verdict [Escrow.Decide] could not confirm,
// which the ledger may hold all the same), and a retry of the payment
// completes the payment as the ledger holds it (Ledger().Get), which
// replays the capture a recovery recorded meanwhile: once bought, the
// answer is delivered.
func (e *Escrow) Complete(ctx context.Context, d EscrowPayment, u *Usage) (sr SettleResponse, bought, pending bool) {
	op, amount := EscrowCapture, d.Capture
	if amount == "" || amount == "0" {
		op, amount = EscrowVoid, ""
	}
	after, sr := e.operate(context.WithoutCancel(ctx), d, op, amount)
	report := EscrowReport{ID: d.ID, State: after.State, Verdict: d.Verdict, Held: d.Amount, Captured: after.Captured,
		HoldTransaction: d.Hold.Transaction, CaptureDeadline: d.CaptureDeadline.Unix()}
	withEscrow(&sr, report)
	if op == EscrowCapture && sr.Success { // a failed capture charged nothing
		withUsage(&sr, u)
	}
	_, recorded := after.Outcome(op)
	return sr, op == EscrowCapture && sr.Success, !sr.Success && !recorded
}

// operate runs the lifecycle operation op of amount on p once, keyed op,
// through [settleEscrow]: a recorded outcome is replayed, and a new one
// recorded before it is returned, with the payment as it stands after
// it. An operation whose outcome is unknown (the facilitator
// unreachable) or could not be recorded is reported failed, and left to
// package x402/escrow's Recovery.
func (e *Escrow) operate(ctx context.Context, p EscrowPayment, op, amount string) (EscrowPayment, SettleResponse) {
	after, o, fresh, err := settleEscrow(ctx, e.ledger, boundedSettle{e.facilitator, e.settle}, e.cfg.Authorizer, p, op, op, amount)
	if err != nil {
		e.log.LogAttrs(ctx, slog.LevelError, "x402: "+op, slog.String("payment", p.ID), slog.String("error", err.Error()))
		return p, SettleResponse{ErrorReason: reasonUnsettled, ErrorMessage: "the " + op + " could not be settled", Network: p.Offer.Network, Payer: p.Payer}
	}
	if fresh {
		e.log.LogAttrs(ctx, slog.LevelInfo, "x402: "+op, slog.String("payment", p.ID), slog.Bool("success", o.Settlement.Success), slog.String("transaction", o.Settlement.Transaction))
	}
	sr := o.Settlement
	if sr.Payer == "" {
		sr.Payer = p.Payer
	}
	return after, sr
}

// settleOnce asks the facilitator to settle p under offer on a context
// detached from the caller's and bounded by the settle timeout; a failure
// to ask is the settlement "unexpected_settle_error".
func (e *Escrow) settleOnce(ctx context.Context, p *PaymentPayload, offer PaymentRequirements, payer string) *SettleResponse {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), e.settle)
	defer cancel()
	sr, err := e.facilitator.Settle(ctx, p, offer)
	if err != nil {
		e.log.LogAttrs(ctx, slog.LevelWarn, "x402: settlement failed", slog.String("error", err.Error()))
		return &SettleResponse{ErrorReason: "unexpected_settle_error", ErrorMessage: "the facilitator could not settle the payment", Network: offer.Network, Payer: payer}
	}
	if sr.Payer == "" {
		sr.Payer = payer
	}
	return sr
}
