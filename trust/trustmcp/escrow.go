package trustmcp

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/x402"
)

// The verdicts the Paywall records of its own for an escrowed call, as
// x402.Middleware records them for a route.
const (
	verdictDelivered = "delivered"
	verdictRefused   = "refused"
	verdictFailed    = "failed"
)

// serveEscrow serves a verified "auth-capture" payment p of offer: it
// places the hold and records it before the tool runs, then captures
// what the tool charges when its result is delivered (its gate, if any,
// passes it, and the verdict it reported, if any, is VALID or INVALID)
// and voids the hold otherwise, and keeps the result with the outcome for a retry. It reports whether the payment stays used: true
// once the hold was asked for.
func (pw *paywall) serveEscrow(ctx context.Context, method string, call *mcp.CallToolRequest, price x402.Price, res x402.ResourceInfo,
	p *x402.PaymentPayload, offer x402.PaymentRequirements, key, paid string, until time.Time, payer string, next mcp.MethodHandler) (mcp.Result, bool) {
	held, err := pw.escrow.Hold(ctx, p, offer, payer)
	if he := (*x402.EscrowHoldError)(nil); errors.As(err, &he) {
		if he.Err != nil {
			return pw.unavailable(ctx, "escrow ledger", he.Err), he.Asked
		}
		return pw.refuse(price, res, he.Reason, he.Settlement), he.Asked
	}
	metered, meter := x402.MeterUsage(ctx, offer)
	work, cancel := context.WithTimeout(metered, timeBudget(price))
	defer cancel()
	panicked := true
	defer func() {
		if panicked { // void the hold and keep the outcome; the panic goes on
			pw.finishEscrow(ctx, price, res, key, paid, until, held, toolFailed(), verdictFailed, "0", nil)
		}
	}()
	result, err := next(work, method, call)
	panicked = false
	ctr, ok := result.(*mcp.CallToolResult)
	if err != nil || !ok || ctr == nil {
		if err != nil {
			pw.log.LogAttrs(ctx, slog.LevelWarn, "trustmcp: the tool failed", slog.String("tool", call.Params.Name), slog.String("error", err.Error()))
		}
		return pw.finishEscrow(ctx, price, res, key, paid, until, held, toolFailed(), verdictFailed, "0", nil), true
	}
	if ctr.IsError {
		return pw.finishEscrow(ctx, price, res, key, paid, until, held, ctr, verdictFailed, "0", nil), true
	}
	// The gate runs before the meter closes, so that it can name its
	// verdict with x402.ReportVerdict.
	refusal := pw.check(work, call, ctr)
	charged, usage := meter.Charge()
	if refusal != nil {
		return pw.finishEscrow(ctx, price, res, key, paid, until, held, refusal, cmp.Or(refusedVerdict(refusal), meter.Verdict(), verdictRefused), "0", nil), true
	}
	capture := charged.Amount
	if v := meter.Verdict(); v != "" && v != string(trust.StatusValid) && v != string(trust.StatusInvalid) {
		// The money follows the verdict, as on the HTTP trust route
		// (trustpay): a definitive verdict, VALID or INVALID, is what
		// was bought; any other trust status is delivered and its hold
		// voided.
		capture, usage = "0", nil
	}
	return pw.finishEscrow(ctx, price, res, key, paid, until, held, ctr, cmp.Or(meter.Verdict(), verdictDelivered), capture, usage), true
}

// finishEscrow records the verdict on the held payment, captures capture
// of it (voids it for "0"), keeps answer with the outcome for a retry and
// returns answer with the outcome in _meta["x402/payment-response"]: or
// the terms, with the failed settlement, when a capture failed.
func (pw *paywall) finishEscrow(ctx context.Context, price x402.Price, res x402.ResourceInfo, key, paid string, until time.Time,
	held x402.EscrowPayment, answer *mcp.CallToolResult, verdict, capture string, usage *x402.Usage) *mcp.CallToolResult {
	pc := pendingCapture{Payment: held.ID, Payer: held.Payer, Call: paid, Usage: usage, Result: answer}
	buys := capture != "" && capture != "0"
	unkept := buys && !pw.keepCapturing(ctx, key, until, pc)
	if unkept { // not captured: the result is not bought, and not returned
		capture, usage, buys = "0", nil, false
	}
	d := pw.escrow.Decide(ctx, held, verdict, capture)
	sr, bought, pending := pw.escrow.Complete(ctx, d, usage)
	unconfirmed := buys && d.Capture == "0" // Decide could not confirm the verdict
	if buys && pending {
		// The capture may still happen (a recovery sends it again, by
		// the verdict the ledger holds, should it hold one): the result
		// it buys is kept for the retry, which completes the payment.
		pw.keepPending(ctx, key, paid, until, pc, &sr)
		if unconfirmed {
			return pw.refuse(price, res, "the payment's verdict could not be confirmed, and its hold stands: nothing is captured yet; call again with the same payment to receive the result once it is captured, or to learn that the hold was voided", &sr)
		}
		return pw.refuse(price, res, "capture failed: "+joinReason(sr.ErrorReason, sr.ErrorMessage), &sr)
	}
	switch {
	case unkept:
		answer = pw.refuse(price, res, "the result could not be kept, so its hold was voided: nothing was bought", &sr)
	case unconfirmed && d.State != x402.EscrowHeld:
		// A recovery voided the payment without a verdict while the tool
		// ran (Decide returns it as it stands): the result is not bought,
		// and not returned, and the payer is told so, as its retry is
		// (completePending).
		answer = pw.refuse(price, res, fmt.Sprintf("the payment was %s without a verdict: nothing was bought", d.State), &sr)
	case unconfirmed:
		// The hold is voided: the result is not bought, and not
		// returned.
		answer = pw.refuse(price, res, "the payment's verdict could not be recorded, so its hold was voided: nothing was bought", &sr)
	case !bought && d.Capture != "0":
		answer = pw.refuse(price, res, "capture failed: "+joinReason(sr.ErrorReason, sr.ErrorMessage), &sr)
	}
	pw.keep(ctx, key, held.Payer, paid, until, answer, &sr)
	if answer.Meta == nil {
		answer.Meta = mcp.Meta{}
	}
	answer.Meta[MetaPaymentResponse] = &sr
	return answer
}

// toolFailed is the result of a tool that failed without a result (a
// protocol error, a panic): a tool error, so that the void can be
// reported with it.
func toolFailed() *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "the tool failed; the payment's hold was voided"}}}
}

// refusedVerdict is the status of a gate's refusal, when it is a
// [Verdict].
func refusedVerdict(r *mcp.CallToolResult) string {
	if v, ok := r.StructuredContent.(Verdict); ok {
		return v.Status
	}
	return ""
}

// pendingCapture is what the Paywall keeps of an escrowed call whose
// capture did not succeed but may still, or is being sent: the payment,
// its payer, the call it paid for, the usage the capture reports and the
// result it buys.
type pendingCapture struct {
	Payment string              `json:"payment"`
	Payer   string              `json:"payer"`
	Call    string              `json:"call,omitempty"`
	Usage   *x402.Usage         `json:"usage,omitempty"`
	Result  *mcp.CallToolResult `json:"result"`
}

// pendingKey is where a pending capture is kept in the answer store.
func pendingKey(key string) string { return key + pendingSuffix }

// pendingSuffix ends the key of a pending capture in the answer store.
const pendingSuffix = "#capture"

// capturingKey is where the result a capture buys is kept while the
// capture is sent.
func capturingKey(key string) string { return key + capturingSuffix }

// capturingSuffix ends the key of a capture being sent in the answer
// store.
const capturingSuffix = "#capturing"

// keepCapturing keeps pc, the result a capture buys, before the verdict
// that captures it is recorded: should the server stop after the
// verdict, package x402/escrow's Recovery captures the payment by it, and
// the retry of the call finds the result here (in a store that outlives
// the server, such as pgstore's) and completes the capture; should it
// stop before, the Recovery voids the payment, which holds no verdict,
// and the retry is told so (completePending). It reports whether it kept
// pc: a result it could not keep is not captured (the caller voids the
// hold), since a stop after the verdict, or a capture left unanswered,
// would charge the payer for a result no retry could get.
func (pw *paywall) keepCapturing(ctx context.Context, key string, until time.Time, pc pendingCapture) bool {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), pw.cfg.SettleTimeout)
	defer cancel()
	b, err := json.Marshal(pc)
	if err == nil {
		err = pw.answers.Keep(ctx, capturingKey(key), pc.Payer, b, until)
	}
	if err != nil {
		pw.log.LogAttrs(ctx, slog.LevelError, "trustmcp: keeping a result before its capture", slog.String("payment", pc.Payment), slog.String("error", err.Error()))
		return false
	}
	return true
}

// keepPending keeps the pending capture pc of the call named call under
// key, and records the call with the capture's failed settlement sr, so
// that a retry of the call finds it.
func (pw *paywall) keepPending(ctx context.Context, key, call string, until time.Time, pc pendingCapture, sr *x402.SettleResponse) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), pw.cfg.SettleTimeout)
	defer cancel()
	b, err := json.Marshal(pc)
	if err == nil {
		err = pw.answers.Keep(ctx, pendingKey(key), pc.Payer, b, until)
	}
	if err != nil {
		pw.log.LogAttrs(ctx, slog.LevelWarn, "trustmcp: keeping a pending capture for a retry", slog.String("error", err.Error()))
	}
	if err := pw.replay.MarkSettled(ctx, key, x402.SettledPayment{Request: call, Settlement: *sr}); err != nil {
		pw.log.LogAttrs(ctx, slog.LevelWarn, "trustmcp: recording the settlement", slog.String("error", err.Error()))
	}
}

// completePending answers the retry of the call named call, whose
// capture was pending or being sent, kept as b: it completes the capture
// (sending it again, or replaying the outcome a recovery recorded) and
// returns the result it bought once captured, kept from then on; or the
// capture's failure, kept for good once the facilitator refused it for
// good. A b kept for another call is answered as a used payment.
func (pw *paywall) completePending(ctx context.Context, price x402.Price, res x402.ResourceInfo, key, call string, until time.Time, b []byte) *mcp.CallToolResult {
	var pc pendingCapture
	if err := json.Unmarshal(b, &pc); err != nil || pc.Result == nil || pc.Payment == "" || pw.escrow == nil || pc.Call != "" && pc.Call != call {
		return pw.refuse(price, res, msgUsed, nil)
	}
	d, err := pw.escrow.Ledger().Get(context.WithoutCancel(ctx), pc.Payment)
	if err != nil {
		return pw.unavailable(ctx, "escrow ledger", err)
	}
	if d.Capture == "" { // its first use kept the result and recorded no verdict (keepCapturing)
		if d.State == x402.EscrowHeld {
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{
				Text: "the payment's first use has not recorded its verdict yet; try again in a moment"}}}
		}
		return pw.refuse(price, res, fmt.Sprintf("the payment was %s without a verdict: nothing was bought", d.State), nil)
	}
	sr, bought, pending := pw.escrow.Complete(ctx, d, pc.Usage)
	var answer *mcp.CallToolResult
	switch {
	case pending:
		return pw.refuse(price, res, "capture failed: "+joinReason(sr.ErrorReason, sr.ErrorMessage), &sr)
	case bought:
		answer = pc.Result
	default:
		answer = pw.refuse(price, res, "capture failed: "+joinReason(sr.ErrorReason, sr.ErrorMessage), &sr)
	}
	pw.keep(ctx, key, pc.Payer, call, until, answer, &sr)
	if answer.Meta == nil {
		answer.Meta = mcp.Meta{}
	}
	answer.Meta[MetaPaymentResponse] = &sr
	return answer
}
