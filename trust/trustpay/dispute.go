package trustpay

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"

	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/escrow"
)

// Disputes refunds the escrowed payment of a paid trust call whose
// caller later proves its outcome wrong, by the seller's policy
// (escrow.Disputes.Policy: nil refunds nothing, so that no refund is
// ever automatic unless the seller configures one).
//
// The route records which payment each call belongs to: Record wraps the
// paid trust handler, inside x402.Middleware on an "auth-capture" route,
// and remembers, for every answer, its trace_id and its receipt's
// receipt_id under the call's caller (trust.CallerFrom) and the payment
// (escrow.PaymentOf). A seller's own route behind a Gate records
// instead, outside the paywall, the receipt id of Vouch-Receipt under the
// payment its escrow report names (x402.EscrowFromSettlement), with
// Escrow.Paid, as examples/marketplace does. The seller then takes
// outcome reports through Feedback in place of Service.Feedback.
type Disputes struct {
	// Service is the trust service that answers the route; it checks
	// that a report comes from the call's caller, and learns it.
	Service *trust.Service
	// Escrow remembers the calls' payments and refunds them.
	Escrow *escrow.Disputes
}

// Record wraps next, the paid trust handler, to remember which escrowed
// payment paid each call it answers, once the payment is captured or its
// capture is decided and left pending (a capture the facilitator did not
// answer, which the retry of the proof or the recovery completes later:
// the call can be disputed once it is captured): a call whose hold is
// voided (an answer delivered again from the handler's store to a retry
// with a new payment, a verdict that captures nothing) is not
// remembered, so that the call stays with the payment that bought it.
// A request that no "auth-capture" payment pays, or an
// answer without a trace id or receipt id, is passed through unchanged.
// When next is an x402.Replayer, so is the handler Record returns: a
// repeat of a settled proof is answered by next's ServeReplay, and
// records nothing.
func (d Disputes) Record(next http.Handler) http.Handler {
	h := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		payment, ok := escrow.PaymentOf(r.Context(), d.Escrow.Authorizer)
		if !ok {
			next.ServeHTTP(w, r)
			return
		}
		rec := &callRecorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		var answer struct {
			TraceID string `json:"trace_id"`
			Receipt struct {
				ReceiptID string `json:"receipt_id"`
			} `json:"receipt"`
		}
		if rec.status >= 400 || json.Unmarshal(rec.body, &answer) != nil {
			return
		}
		// Only a capture buys the answer: a hold voided (a stored
		// answer delivered again, a verdict that decides nothing) cost
		// its payer nothing and leaves the call to the payment that
		// bought it. A capture decided but not yet answered is
		// remembered too: the retry of the proof delivers the answer
		// once it is captured, and the dispute then finds its payment.
		// The caller is read once next has run: the trust handler names
		// it as it serves.
		caller := trust.CallerFrom(r.Context())
		keep := context.WithoutCancel(r.Context())
		x402.AfterSettle(r.Context(), func(captured bool) {
			if captured || d.captureDecided(keep, payment) {
				d.Escrow.Paid(caller, payment, answer.TraceID, answer.Receipt.ReceiptID)
			}
		})
	})
	if rp, ok := next.(x402.Replayer); ok {
		return recordingReplayer{h, rp}
	}
	return h
}

// captureDecided reports whether the ledger records a capture of
// payment, done or to come: a verdict that captures more than nothing,
// and the hold not voided.
func (d Disputes) captureDecided(ctx context.Context, payment string) bool {
	p, err := d.Escrow.Ledger.Get(ctx, payment)
	return err == nil && p.State != x402.EscrowVoided && strings.Trim(p.Capture, "0") != ""
}

// recordingReplayer is Record's handler over an x402.Replayer, whose
// replays it passes on.
type recordingReplayer struct {
	http.Handler
	rp x402.Replayer
}

func (h recordingReplayer) ServeReplay(w http.ResponseWriter, r *http.Request) bool {
	return h.rp.ServeReplay(w, r)
}

// callRecorder passes an answer through and keeps a copy of it.
type callRecorder struct {
	http.ResponseWriter
	status int
	body   []byte
}

func (c *callRecorder) WriteHeader(status int) {
	if c.status == 0 {
		c.status = status
	}
	c.ResponseWriter.WriteHeader(status)
}

func (c *callRecorder) Write(b []byte) (int, error) {
	if c.status == 0 {
		c.status = http.StatusOK
	}
	c.body = append(c.body, b...)
	return c.ResponseWriter.Write(b)
}

// Feedback reports the outcome of the call named id (its trace id or
// receipt id) as Service.Feedback does, which accepts a report only from
// the call's caller (trust.CallerFrom(ctx)); once it accepted a report
// that the outcome was wrong, the call's payment is refunded by the
// seller's policy, once (escrow.Disputes.Report). It returns the
// refund's outcome and whether there was one; a report the service
// refuses (trust.ErrUnknownCall, trust.ErrReputationOff) refunds nothing.
// A report the service accepted but whose exam failed (trust.ErrExam)
// stands, and refunds as any accepted report: the refund's outcome is
// returned with that error, which reporting again clears. On a server
// that did not answer the call (escrow.Disputes remembers the calls of
// its own server), a report by receipt id the service accepts stands,
// and the refund fails with escrow.ErrUnknownCall.
func (d Disputes) Feedback(ctx context.Context, id string, right bool) (x402.EscrowOutcome, bool, error) {
	err := d.Service.Feedback(ctx, id, right)
	if err != nil && !errors.Is(err, trust.ErrExam) {
		return x402.EscrowOutcome{}, false, err
	}
	out, refunded, rerr := d.Escrow.Report(ctx, trust.CallerFrom(ctx), id, right)
	if rerr != nil {
		return out, refunded, rerr
	}
	return out, refunded, err
}
