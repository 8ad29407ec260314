package x402

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"time"

	"github.com/vouchkit/vouch/problem"
)

// EscrowAuthorizer is the network's half of an "auth-capture" route, which
// this package, knowing no network's cryptography, leaves to another (for
// EVM networks, evm.ReceiverAuthorizer). It must be safe for concurrent
// use.
type EscrowAuthorizer interface {
	// Hold returns the payment that payload, a payer's payload for
	// offer, asks to hold: its ID, Payer, Amount and deadlines, with
	// Offer and Payload set to offer and payload. It fails when the
	// payload is not one for offer or offer names another receiver
	// authorizer.
	Hold(offer PaymentRequirements, payload json.RawMessage) (EscrowPayment, error)
	// Consent returns the facilitator settle of operation (EscrowCapture,
	// EscrowVoid or EscrowRefund) of amount on p, with the server's
	// consent. A capture of less than the hold voids the rest in the same
	// settle.
	Consent(p EscrowPayment, operation, amount string) (*PaymentPayload, error)
}

// EscrowConfig configures the "auth-capture" routes of [Middleware].
type EscrowConfig struct {
	// Authorizer reads holds and consents to their lifecycle. Required.
	Authorizer EscrowAuthorizer
	// Ledger records each payment's lifecycle; nil means a new
	// MemoryEscrowLedger.
	Ledger EscrowLedger
	// CaptureWindow is how long after a request a hold can be captured:
	// each 402 answer offers extra.captureDeadline now+CaptureWindow, and
	// a payment is refused unless its captureDeadline lies within it and
	// after the route's time budget and two settlements (the hold and the
	// capture). Zero means DefaultCaptureWindow. It must not exceed
	// MiddlewareConfig.MaxValidity: a hold is captured or voided within
	// the time the server remembers its proof.
	CaptureWindow time.Duration
	// RefundWindow is how long after the capture deadline a capture can
	// be refunded (extra.refundDeadline); zero means DefaultRefundWindow.
	RefundWindow time.Duration
}

// Windows of an [EscrowConfig] whose members are zero.
const (
	DefaultCaptureWindow = 10 * time.Minute
	DefaultRefundWindow  = 24 * time.Hour
)

// ExtensionEscrow is the extension of a payment response in which
// [Middleware] reports an "auth-capture" payment's lifecycle:
// {"info": [EscrowReport]}.
const ExtensionEscrow = "vouch-escrow"

// EscrowReport is what a payment response tells the payer of its
// "auth-capture" payment: the hold, the verdict and what was captured.
type EscrowReport struct {
	// ID is the payment's id (its PaymentInfo hash on EVM networks).
	ID string `json:"id"`
	// State is "captured" or "voided" (or "held" when the operation
	// failed and the hold remains until the capture deadline).
	State EscrowState `json:"state"`
	// Verdict is why: the trust verdict, or "delivered", "refused",
	// "failed" (the handler answered 400 or more, or panicked) or
	// "stored" (an answer bought before); empty for a payment voided
	// without a verdict (a recovery gave up on its work), as the ledger
	// records it, and for one whose verdict the ledger did not confirm
	// (see [Escrow.Decide]).
	Verdict string `json:"verdict"`
	// Held is the amount held, Captured what was captured of it.
	Held     string `json:"held"`
	Captured string `json:"captured"`
	// HoldTransaction is the transaction of the hold.
	HoldTransaction string `json:"holdTransaction"`
	// CaptureDeadline is the hold's capture deadline, Unix seconds.
	CaptureDeadline int64 `json:"captureDeadline"`
}

// EscrowFromSettlement returns the escrow report of a payment response,
// and false when it has none.
func EscrowFromSettlement(sr *SettleResponse) (EscrowReport, bool) {
	var ext struct {
		Info *EscrowReport `json:"info"`
	}
	if sr == nil || json.Unmarshal(sr.Extensions[ExtensionEscrow], &ext) != nil || ext.Info == nil {
		return EscrowReport{}, false
	}
	return *ext.Info, true
}

// holdStands reports whether sr, a payment response, reports an
// "auth-capture" hold still standing: its capture or void failed without
// an outcome (the reason reasonUnsettled, see [Escrow.Complete]), and a
// capture decided may still happen (a retry of the payment, or package
// x402/escrow's Recovery, sends it again). The payment is then neither
// refused nor finished: its payment id is not free for another payment,
// and its payer sends it again to get the answer once it is captured. A
// capture the facilitator refused for good (its own reason) will not
// happen: the hold stands only until the Recovery voids it, and the
// payment is refused.
func holdStands(sr *SettleResponse) bool {
	if sr == nil || sr.Success || sr.ErrorReason != reasonUnsettled {
		return false
	}
	e, ok := EscrowFromSettlement(sr)
	return ok && e.State == EscrowHeld
}

// The verdicts the middleware records of its own.
const (
	verdictDelivered = "delivered"
	verdictRefused   = "refused"
	verdictFailed    = "failed"
	verdictStored    = "stored"
)

// reasonUnsettled is the reason of the payment response of an escrow
// operation whose outcome is unknown, left for a retry or the Recovery
// to send again: the protocol's reason for a facilitator's failure,
// which [TransientRefusal] never takes for a final outcome.
const reasonUnsettled = "unexpected_settle_error"

// reasonCaptureDeadline is the reason of a 402 for an "auth-capture"
// payment whose capture deadline is not one the route offers.
const reasonCaptureDeadline = "invalid_auth_capture_deadline"

func (e *EscrowConfig) windows() (capture, refund time.Duration) {
	capture, refund = e.CaptureWindow, e.RefundWindow
	if capture == 0 {
		capture = DefaultCaptureWindow
	}
	if refund == 0 {
		refund = DefaultRefundWindow
	}
	return capture, refund
}

// acceptedTerms returns offer, an "auth-capture" offer of price, with
// the deadlines p's payer signed (see [Escrow.Terms]), and late, the
// reason they leave no room for new work, when only the repeat of a proof
// spent before may pass (its capture may be pending until its deadline);
// false when the deadlines cannot be read at all (refuse with late).
func (pw *paywall) acceptedTerms(offer PaymentRequirements, p *PaymentPayload, price Price, now time.Time) (signed PaymentRequirements, late string, ok bool) {
	signed, late = pw.escrow.Terms(offer, p.Accepted, price, now)
	if late == "" {
		return signed, "", true
	}
	signed, ok = pw.escrow.Signed(offer, p.Accepted)
	return signed, late, ok
}

// serveEscrow serves a verified "auth-capture" payment: it places the hold and
// records it before the handler runs, then captures what the answer
// charges when the answer is delivered and voids the hold otherwise, each
// operation recorded once. On a gated route the request body is read
// first, and one the gate cannot read is refused with no hold asked for.
// It reports whether the proof stays used: true once the hold was asked
// for.
func (pw *paywall) serveEscrow(w http.ResponseWriter, r *http.Request, next http.Handler, m *meter, price Price, res ResourceInfo, p *PaymentPayload, offer PaymentRequirements, key string, until time.Time, payer string) (used bool) {
	ctx := r.Context()
	req, body := r, []byte(nil)
	if price.Gate != nil {
		var bad *problem.Details
		if req, body, bad = gatedBody(r, price.Gate); bad != nil {
			writeProblem(w, r, bad)
			return false // nothing held: the proof may be sent again
		}
	}
	keep := context.WithoutCancel(ctx)
	defer pw.beginSettling(key)() // a repeat waits for the lifecycle's outcome
	payment, err := pw.escrow.Hold(ctx, p, offer, payer)
	if he := (*EscrowHoldError)(nil); errors.As(err, &he) {
		if he.Err != nil {
			pw.unavailable(w, r, "escrow ledger", he.Err)
		} else {
			pw.require(w, r, price, res, he.Reason, he.Settlement)
		}
		return he.Asked
	}
	if vp, ok := PaymentFromContext(ctx); ok { // the hold the handler runs on
		held := payment
		vp.Escrow = &held
	}

	panicked := true
	defer func() {
		if panicked { // void the hold and keep the outcome; the panic goes on
			d := pw.escrow.Decide(keep, payment, verdictFailed, "0")
			pw.finish(keep, r, p, key, until, d, BufferedResponse{Status: http.StatusInternalServerError, Header: make(http.Header)}, nil, false)
		}
	}()
	response, verdict, charged, u, deliver := pw.escrowWork(req, body, next, m, price, offer)
	panicked = false
	amount := "0"
	if deliver {
		amount = charged.Amount
	}
	if amount != "0" && amount != "" && !pw.keepAhead(keep, key, until, Outcome{Request: paidRequest(r, p), Payer: payment.Payer, Response: response, PendingCapture: payment.ID, Usage: u}) {
		// Not captured: the answer is not bought, and not sent.
		amount = "0"
		response = problemResponse(problem.New(http.StatusPaymentRequired, problem.CodePaymentRequired,
			"the answer could not be kept, so its hold was voided: nothing was bought"))
	}
	decided := pw.escrow.Decide(keep, payment, verdict, amount)
	response, sr, delivered := pw.finish(keep, r, p, key, until, decided, response, u, positive(amount))
	if vp, ok := PaymentFromContext(ctx); ok && vp.outcome != nil && delivered {
		vp.outcome.end(true) // before the answer leaves, so that what it buys is recorded
	}
	if err := setSettlement(w.Header(), &sr, p.X402Version); err != nil {
		pw.unavailable(w, r, "encoding the settlement", err)
		return true
	}
	writeBuffered(w, response)
	return true
}

// escrowWork runs the handler on req into a buffer, and the route's gate
// on its answer (body is req's body, which the gate reads), and returns
// the answer to send, the verdict, the offer charged (with the usage
// reported) and whether to capture.
func (pw *paywall) escrowWork(req *http.Request, body []byte, next http.Handler, m *meter, price Price, offer PaymentRequirements) (BufferedResponse, string, PaymentRequirements, *Usage, bool) {
	ctx := req.Context()
	rec := &recorder{header: make(http.Header)}
	m.serve(next, rec, req)
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	answer := BufferedResponse{Status: rec.status, Header: rec.header, Body: rec.body.Bytes()}
	charged, u := m.charge(offer)
	reported := m.reportedVerdict()
	switch {
	case rec.status >= 400:
		return answer, verdictFailed, charged, u, false
	case fromStore(rec.header):
		return answer, verdictStored, charged, u, false // bought before: never charged again
	case price.Gate == nil:
		return answer, cmp.Or(reported, verdictDelivered), charged, u, true
	}
	req.Body = io.NopCloser(bytes.NewReader(body))
	d := price.Gate.Check(ctx, req, body, &BufferedResponse{Status: answer.Status, Header: answer.Header.Clone(), Body: bytes.Clone(answer.Body)})
	verdict := cmp.Or(d.Verdict, reported)
	if !d.Deliver {
		return pw.refusal(d), cmp.Or(verdict, verdictRefused), charged, u, false
	}
	answer.Header = mergeHeader(answer.Header, d.Header)
	return answer, cmp.Or(verdict, verdictDelivered), charged, u, true
}

// positive reports whether amount, a decimal amount, is above zero.
func positive(amount string) bool {
	n, err := escrowAmount(amount)
	return err == nil && n.Sign() > 0
}

// reportedVerdict returns what the handler named with ReportVerdict.
func (m *meter) reportedVerdict() string {
	if m == nil {
		return ""
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.verdict
}

func problemResponse(d *problem.Details) BufferedResponse {
	rec := &recorder{header: make(http.Header)}
	problem.Write(rec, d)
	return BufferedResponse{Status: rec.status, Header: rec.header, Body: rec.body.Bytes()}
}

// keepAhead keeps o, the answer a capture buys, as a pending capture
// before the verdict that captures it is recorded, and reports whether it
// did: should the server stop after the verdict, package x402/escrow's
// Recovery captures the payment by it, and the retry of the proof finds
// the answer (in a store that outlives the server, such as pgstore's) and
// completes the capture; should it stop before, the Recovery voids the
// payment, which holds no verdict, and the retry is told so
// (completeCapture). An answer it could not keep is not captured (the
// caller voids the hold): a stop after the verdict, or a capture left
// unanswered, would charge the payer for an answer no retry could get, as
// a gated route settles no answer it could not keep.
func (pw *paywall) keepAhead(ctx context.Context, key string, until time.Time, o Outcome) bool {
	if err := pw.outcomes.Keep(ctx, key, o, until); err != nil {
		pw.log.LogAttrs(ctx, slog.LevelError, "x402: keeping an answer before its capture", slog.String("payment", o.PendingCapture), slog.String("error", err.Error()))
		return false
	}
	return true
}

// finish captures or voids the payment as decided (d, what Decide
// returned) and keeps the outcome for a repeat of the proof; buys reports
// whether response is an answer the work asked to capture for. It returns
// the answer to send with the settlement in the payment headers (the
// delivered answer with the capture, or the failure with the void), and
// whether the answer was delivered.
func (pw *paywall) finish(ctx context.Context, r *http.Request, p *PaymentPayload, key string, until time.Time, d EscrowPayment, response BufferedResponse, u *Usage, buys bool) (BufferedResponse, SettleResponse, bool) {
	paid := paidRequest(r, p)
	sr, delivered, pending := pw.escrow.Complete(ctx, d, u)
	o := Outcome{Request: paid, Payer: d.Payer, Delivered: delivered, Response: response, Settlement: &sr}
	unconfirmed := buys && !positive(d.Capture) // Decide could not confirm the verdict
	switch {
	case buys && pending:
		// The capture may still happen (a recovery sends it again, by
		// the verdict the ledger holds, should it hold one): the answer
		// it buys is kept for the retry, which completes the payment.
		o.PendingCapture, o.Usage = d.ID, u
		response = captureFailed(sr)
		if unconfirmed {
			response = problemResponse(problem.New(http.StatusPaymentRequired, problem.CodePaymentRequired,
				"the payment's verdict could not be confirmed, and its hold stands: nothing is captured yet; send the same payment again to receive the answer once it is captured, or to learn that the hold was voided"))
		}
	case unconfirmed && d.State != EscrowHeld:
		// A recovery voided the payment without a verdict while its work
		// ran (Decide returns it as it stands): the answer is not bought,
		// and not sent, and the payer is told so, as its retry is
		// (undecided).
		response = problemResponse(problem.Newf(http.StatusPaymentRequired, problem.CodePaymentRequired,
			"the payment was %s without a verdict: nothing was bought", d.State))
		o.Response = response
	case unconfirmed:
		// The hold is voided: the answer is not bought, and not sent.
		response = problemResponse(problem.New(http.StatusPaymentRequired, problem.CodePaymentRequired,
			"the payment's verdict could not be recorded, so its hold was voided: nothing was bought"))
		o.Response = response
	case buys && !sr.Success:
		// The answer is not bought: the hold stays until it is voided
		// or reclaimed, and the buyer learns why.
		response = captureFailed(sr)
		o.Response = response
	}
	if err := pw.outcomes.Keep(ctx, key, o, until); err != nil {
		pw.log.LogAttrs(ctx, slog.LevelWarn, "x402: keeping an escrow outcome", slog.String("error", err.Error()))
	}
	return response, sr, delivered
}

// captureFailed is the answer of a payment whose capture failed.
func captureFailed(sr SettleResponse) BufferedResponse {
	return problemResponse(problem.Newf(http.StatusPaymentRequired, problem.CodePaymentRequired, "capture failed: %s", joinReason(sr.ErrorReason, sr.ErrorMessage)))
}

// completeCapture answers the retry of a payment whose capture was
// pending (o, its kept outcome): it completes the capture, sending it
// again or replaying the outcome a recovery recorded, and delivers the
// answer it bought once captured; or answers as the first use was
// answered, with the capture's failure, keeping the answer while the
// capture may still happen.
func (pw *paywall) completeCapture(w http.ResponseWriter, r *http.Request, p *PaymentPayload, key string, until time.Time, o Outcome) {
	keep := context.WithoutCancel(r.Context())
	d, err := pw.escrow.Ledger().Get(keep, o.PendingCapture)
	if err != nil {
		pw.unavailable(w, r, "escrow ledger", err)
		return
	}
	if d.Capture == "" { // its first use kept the answer and recorded no verdict (keepAhead)
		pw.undecided(w, r, key, until, o, d)
		return
	}
	sr, delivered, pending := pw.escrow.Complete(keep, d, o.Usage)
	next := Outcome{Request: o.Request, Payer: o.Payer, Delivered: delivered, Response: o.Response, Settlement: &sr}
	response := o.Response
	switch {
	case pending:
		next.PendingCapture, next.Usage = o.PendingCapture, o.Usage
		response = captureFailed(sr)
	case !delivered:
		response = captureFailed(sr)
		next.Response = response
	}
	if err := pw.outcomes.Keep(keep, key, next, until); err != nil {
		pw.log.LogAttrs(keep, slog.LevelWarn, "x402: keeping an escrow outcome", slog.String("error", err.Error()))
	}
	if err := setSettlement(w.Header(), &sr, p.X402Version); err != nil {
		pw.unavailable(w, r, "encoding the settlement", err)
		return
	}
	pw.log.LogAttrs(keep, slog.LevelInfo, "x402: pending capture completed", slog.String("payment", d.ID), slog.Bool("delivered", delivered))
	writeBuffered(w, response)
}

// undecided answers the retry of a proof whose payment d holds no
// verdict, its answer kept as o: while d is held, its first use is
// recording the verdict (on another server) or stopped before it, and
// the retry is answered 503 to come back; once the Recovery voided it,
// nothing was bought, and the retry, and any after it, is answered 402
// saying so.
func (pw *paywall) undecided(w http.ResponseWriter, r *http.Request, key string, until time.Time, o Outcome, d EscrowPayment) {
	if d.State == EscrowHeld {
		w.Header().Set("Retry-After", "1")
		writeProblem(w, r, problem.New(http.StatusServiceUnavailable, problem.CodeUnavailable,
			"the payment's first use has not recorded its verdict yet; retry"))
		return
	}
	refusal := problemResponse(problem.Newf(http.StatusPaymentRequired, problem.CodePaymentRequired,
		"the payment was %s without a verdict: nothing was bought", d.State))
	keep := context.WithoutCancel(r.Context())
	if err := pw.outcomes.Keep(keep, key, Outcome{Request: o.Request, Payer: o.Payer, Response: refusal}, until); err != nil {
		pw.log.LogAttrs(keep, slog.LevelWarn, "x402: keeping an escrow outcome", slog.String("error", err.Error()))
	}
	writeBuffered(w, refusal)
}
