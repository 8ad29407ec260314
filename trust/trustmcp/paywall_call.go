package trustmcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vouchkit/vouch/internal/jsonbody"
	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/x402"
)

// timeBudget is how long a priced tool may run.
func timeBudget(p x402.Price) time.Duration {
	if p.TimeBudget == 0 {
		return x402.DefaultTimeBudget
	}
	return p.TimeBudget
}

// validity is how long after it is received an authorization must stay
// valid: through the tool's time budget (unless settled before) and the
// settlement.
func validity(p x402.Price, settle time.Duration) time.Duration {
	if p.SettleBefore {
		return settle
	}
	return timeBudget(p) + settle
}

// shortValidity returns why p's authorization, received at at, may
// expire before the tool's work and its settlement end; "" when it will
// not, or when p names no validBefore.
func (pw *paywall) shortValidity(p *x402.PaymentPayload, price x402.Price, at time.Time) string {
	vb, ok := p.AuthorizationValidBefore()
	// validBefore is exclusive: the authorization must still be valid at
	// the last second the settlement may land.
	need := at.Add(validity(price, pw.cfg.SettleTimeout))
	if !ok || vb.After(need) {
		return ""
	}
	return fmt.Sprintf("authorization_validity_too_short: the authorization must stay valid through the tool's time budget and settlement: validBefore %d is not after %d",
		vb.Unix(), need.Unix())
}

// lateAfterVerify returns why p, paying offer and just verified, leaves
// too little time from now for the tool's work and its settlement, which
// the checks made as it arrived could not see: the verification took
// part of that time. An "auth-capture" payment's capture deadline must
// still be after the work and its two settlements (x402.Escrow.Terms).
func (pw *paywall) lateAfterVerify(p *x402.PaymentPayload, offer x402.PaymentRequirements, price x402.Price) string {
	now := pw.now()
	if offer.Scheme == x402.SchemeAuthCapture && pw.escrow != nil {
		if _, late := pw.escrow.Terms(offer, p.Accepted, price, now); late != "" {
			return late
		}
	}
	return pw.shortValidity(p, price, now)
}

func (pw *paywall) now() time.Time {
	if pw.cfg.Now != nil {
		return pw.cfg.Now()
	}
	return time.Now()
}

func (pw *paywall) serve(ctx context.Context, method string, call *mcp.CallToolRequest, price x402.Price, next mcp.MethodHandler) (mcp.Result, error) {
	name := call.Params.Name
	res := x402.ResourceInfo{URL: "mcp://tool/" + name, Description: price.Description, MimeType: price.MimeType}
	raw, ok := call.Params.Meta[MetaPayment]
	if !ok || raw == nil {
		pw.tel.Refused("", nil)
		return terms(pw.offers(price), res, "payment required: send it in _meta[\""+MetaPayment+"\"]", nil), nil
	}
	p, err := decodePayment(raw)
	if err != nil {
		return pw.refuse(price, res, "_meta[\""+MetaPayment+"\"]: "+err.Error(), nil), nil
	}
	offers := price.Accepts
	if p.Accepted.Scheme == x402.SchemeAuthCapture && pw.escrow != nil {
		// Offers that differ only in their extra (the asset-transfer
		// method) are told apart by it.
		offers = pw.escrow.Candidates(offers, p.Accepted)
	}
	offer, ok := x402.Price{Accepts: offers}.Match(p)
	if !ok {
		return pw.refuse(price, res, "the payment matches none of the accepted offers", nil), nil
	}
	if p.X402Version == x402.Version1 {
		p.Resource = &res
	}
	now := pw.now()
	late := "" // why the deadlines leave no room for new work: only a repeat passes
	if offer.Scheme == x402.SchemeAuthCapture {
		// The payer signed the deadlines of the terms it read. Deadlines
		// that leave no room for new work may still be those of a payment
		// spent before, whose capture may be pending until its deadline:
		// what was kept of it answers it below.
		signed, reason := pw.escrow.Terms(offer, p.Accepted, price, now)
		if reason != "" {
			var ok bool
			if signed, ok = pw.escrow.Signed(offer, p.Accepted); !ok {
				return pw.refuse(price, res, reason, nil), nil
			}
		}
		offer, late = signed, reason
	}
	key, until := x402.ReplayKey(p, offer, now)
	if limit := now.Add(pw.cfg.MaxValidity); until.After(limit) {
		// Refused before it is reserved: its record would have to outlive
		// what the stores keep.
		return pw.refuse(price, res, fmt.Sprintf("%s: the authorization may stay valid for at most %s: validBefore %d is after %d",
			reasonValidityTooLong, pw.cfg.MaxValidity, until.Unix(), limit.Unix()), nil), nil
	}
	paid := paidCall(ctx, call, p)
	fl, first := pw.startFlight(key, paid)
	for !first {
		// The payment is in use by a call running in this process: a retry
		// of that call waits for its end, then gets its kept result or, if
		// it did not settle, may use the payment again.
		if fl.call != paid {
			return pw.refuse(price, res, msgUsed, nil), nil
		}
		select {
		case <-fl.done:
		case <-ctx.Done():
			return pw.refuse(price, res, msgUsed, nil), nil
		}
		now = pw.now()
		fl, first = pw.startFlight(key, paid)
	}
	defer pw.endFlight(key, fl)
	// Kept for as long from now: a call that waited above reserves the
	// payment from the time it stopped waiting, not from its arrival.
	_, until = x402.ReplayKey(p, offer, now)
	until = x402.KeepProofUntil(offer, until, now.Add(pw.cfg.MaxValidity))
	fresh, err := pw.replay.Reserve(ctx, key, now, until)
	if err != nil {
		return pw.unavailable(ctx, "replay store", err), nil
	}
	if fresh && pw.spent(ctx, key, pw.cfg.Gates[name] != nil, offer.Scheme == x402.SchemeAuthCapture, now) {
		// A replay store that forgot the payment (one in memory,
		// restarted) beside answers that remember it (kept in a
		// database): the payment was spent, and its retry gets its
		// outcome.
		fresh = false
	}
	if fresh && late != "" { // no repeat: a new payment too late for the work
		_ = pw.replay.Release(context.WithoutCancel(ctx), key, until)
		return pw.refuse(price, res, late, nil), nil
	}
	if !fresh {
		if refusal, ok := pw.keptRefusal(ctx, key, paid, now); ok {
			return refusal, nil
		}
		return pw.repeat(ctx, price, res, p, offer, key, paid, now, until), nil
	}
	settled := false
	defer func() {
		if !settled { // not verified, or the tool failed: the payer may send it again
			_ = pw.replay.Release(context.WithoutCancel(ctx), key, until)
		}
	}()
	if short := pw.shortValidity(p, price, now); short != "" {
		return pw.refuse(price, res, short, nil), nil
	}
	vr, err := pw.cfg.Facilitator.Verify(ctx, p, offer)
	if err != nil {
		return pw.unavailable(ctx, "facilitator verify", err), nil
	}
	if !vr.IsValid {
		pw.log.LogAttrs(ctx, slog.LevelInfo, "trustmcp: payment invalid", slog.String("tool", name), slog.String("reason", vr.InvalidReason))
		return pw.refuse(price, res, joinReason(vr.InvalidReason, vr.InvalidMessage), nil), nil
	}
	if late := pw.lateAfterVerify(p, offer, price); late != "" {
		return pw.refuse(price, res, late, nil), nil
	}

	if offer.Scheme == x402.SchemeAuthCapture {
		settled = true // kept used if the tool panics: the hold was voided
		var result mcp.Result
		result, settled = pw.serveEscrow(ctx, method, call, price, res, p, offer, key, paid, until, vr.Payer, next)
		return result, nil
	}
	metered, meter := x402.MeterUsage(ctx, offer)
	work, cancel := context.WithTimeout(metered, timeBudget(price))
	defer cancel()
	var sr *x402.SettleResponse
	if price.SettleBefore {
		settled = true // from here on the payment stays used, whatever the outcome
		if sr = pw.settle(ctx, name, p, offer, vr.Payer); !sr.Success {
			return pw.refuse(price, res, "settlement failed: "+joinReason(sr.ErrorReason, sr.ErrorMessage), sr), nil
		}
	}
	result, err := runMetered(work, meter, method, call, next)
	ctr, ok := result.(*mcp.CallToolResult)
	if sr != nil && (err != nil || !ok || ctr == nil) {
		// Paid before it ran, the call failed without a result: the
		// payer learns that it paid from a tool error that carries the
		// settlement, kept for its retry, as any paid result.
		if err == nil {
			err = errors.New("the tool answered no result")
		}
		pw.log.LogAttrs(ctx, slog.LevelWarn, "trustmcp: the tool failed after its payment settled", slog.String("tool", name), slog.String("error", err.Error()))
		ctr, ok, err = toolError(err), true, nil
	}
	if err != nil {
		return nil, err
	}
	if !ok || ctr == nil {
		return result, nil
	}
	if sr == nil {
		if ctr.IsError {
			return ctr, nil
		}
		settled = true // from here on the payment stays used, whatever the outcome
		// The usage of an "upto" payment is the tool's to report.
		charged, usage := meter.Charge()
		if refusal := pw.check(work, call, ctr); refusal != nil {
			pw.keepRefusal(ctx, key, vr.Payer, paid, until, refusal)
			return refusal, nil
		}
		// Kept before it is paid for: a result that could not be kept is
		// not settled, and one whose settlement fails is settled again by
		// the retry of its call (completeSettling).
		sc := settlingCall{Payer: vr.Payer, Call: paid, Usage: usage, Result: ctr}
		if err := pw.keepSettling(ctx, key, until, &sc); err != nil {
			settled = false // nothing was settled: the payer may send the payment again
			return pw.unavailable(ctx, "answer store", err), nil
		}
		if sr = pw.settle(ctx, name, p, charged, vr.Payer); !sr.Success {
			pw.noteAnswered(key, sc.SettleBy)
			return pw.refuse(price, res, "settlement failed: "+joinReason(sr.ErrorReason, sr.ErrorMessage), sr), nil
		}
		if usage != nil {
			sr.SetUsage(*usage)
		}
	}
	pw.keep(ctx, key, vr.Payer, paid, until, ctr, sr)
	if ctr.Meta == nil {
		ctr.Meta = mcp.Meta{}
	}
	ctr.Meta[MetaPaymentResponse] = sr
	return ctr, nil
}

// runMetered runs the tool and closes meter when it returns or panics:
// a usage reported after the tool returned is refused
// (x402.ErrUsageClosed) whether its result settles or not.
func runMetered(ctx context.Context, meter *x402.UsageMeter, method string, call *mcp.CallToolRequest, next mcp.MethodHandler) (mcp.Result, error) {
	defer meter.Charge()
	return next(ctx, method, call)
}

// reasonValidityTooLong is the reason of the terms for an authorization
// valid for longer than the Paywall remembers payments (MaxValidity).
const reasonValidityTooLong = "authorization_validity_too_long"

// answering is a Facilitator that never answers nil without an error,
// and gives each Verify at most verifyWithin: a facilitator that never
// answers a verification would otherwise hold the call, and its
// reservation of the proof, for as long as the client waits. A valid
// verification or a successful settlement that leaves the payer out
// names the signer of the payment's authorization
// ([x402.PaymentPayload.AuthorizationFrom]), as [x402.Middleware] does:
// answers are kept apart by payer, and every such payer would otherwise
// be one payer "", whose calls push out each other's kept results.
type answering struct {
	x402.Facilitator
	verifyWithin time.Duration
}

func (f answering) Verify(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.VerifyResponse, error) {
	ctx, cancel := context.WithTimeout(ctx, f.verifyWithin)
	defer cancel()
	vr, err := f.Facilitator.Verify(ctx, p, r)
	if err == nil && vr == nil {
		err = errors.New("the facilitator returned no verification")
	}
	if err == nil && vr.IsValid && vr.Payer == "" {
		named := *vr // the facilitator's answer is its own
		named.Payer, _ = p.AuthorizationFrom()
		vr = &named
	}
	return vr, err
}

func (f answering) Settle(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.SettleResponse, error) {
	sr, err := f.Facilitator.Settle(ctx, p, r)
	if err == nil && sr == nil {
		err = errors.New("the facilitator returned no settlement")
	}
	if err == nil && sr.Success && sr.Payer == "" {
		named := *sr
		named.Payer, _ = p.AuthorizationFrom()
		sr = &named
	}
	return sr, err
}

// settle settles p on a context detached from the call's, so that a
// client that goes away cannot cancel a settlement the facilitator may
// complete anyway, bounded by SettleTimeout. A failure is a settlement
// with Success false.
func (pw *paywall) settle(ctx context.Context, tool string, p *x402.PaymentPayload, offer x402.PaymentRequirements, payer string) *x402.SettleResponse {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), pw.cfg.SettleTimeout)
	defer cancel()
	sr, err := pw.cfg.Facilitator.Settle(ctx, p, offer)
	if err != nil {
		pw.log.LogAttrs(ctx, slog.LevelWarn, "trustmcp: settlement failed", slog.String("tool", tool), slog.String("error", err.Error()))
		// The error stays in the log: it may name the facilitator's address
		// or key, which the payer must not see.
		return &x402.SettleResponse{ErrorReason: "unexpected_settle_error", ErrorMessage: "the facilitator could not settle the payment",
			Network: offer.Network, Payer: payer}
	}
	if sr.Success {
		if sr.Payer == "" {
			sr.Payer = payer
		}
		pw.log.LogAttrs(ctx, slog.LevelInfo, "trustmcp: settled", slog.String("tool", tool),
			slog.String("transaction", sr.Transaction), slog.String("payer", sr.Payer), slog.String("network", sr.Network))
		if sr.Amount != "" && sr.Amount != offer.Amount {
			// Passed on as the facilitator answered: what moved is its word.
			pw.log.LogAttrs(ctx, slog.LevelWarn, "trustmcp: the facilitator settled another amount than the one charged", slog.String("tool", tool),
				slog.String("charged", offer.Amount), slog.String("settled", sr.Amount), slog.String("transaction", sr.Transaction))
		}
	}
	return sr
}

// decodePayment reads the payment of _meta, which the SDK decoded as
// generic JSON, into a PaymentPayload, as the HTTP doors read their
// header's: a proof that is no object, or a member of the wrong type,
// is an error naming it ("x402Version expected a number, got string").
func decodePayment(v any) (*x402.PaymentPayload, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	if t := bytes.TrimSpace(b); len(t) == 0 || t[0] != '{' {
		return nil, errors.New("must be an object, the payment payload")
	}
	p := new(x402.PaymentPayload)
	if err := jsonbody.Unmarshal(b, p); err != nil {
		return nil, fieldErrors(err)
	}
	if err := p.Check(); err != nil {
		return nil, fieldErrors(err)
	}
	return p, nil
}

// fieldErrors is err, a problem naming the members of a payment at
// fault, as one line: each member and what is wrong with it.
func fieldErrors(err error) error {
	var pd *problem.Details
	if !errors.As(err, &pd) || len(pd.Errors) == 0 {
		return err
	}
	texts := make([]string, len(pd.Errors))
	for i, fe := range pd.Errors {
		texts[i] = fe.Field + " " + fe.Message
	}
	return errors.New(strings.Join(texts, "; "))
}

// refuse counts a refused payment and returns the terms.
func (pw *paywall) refuse(price x402.Price, res x402.ResourceInfo, reason string, sr *x402.SettleResponse) *mcp.CallToolResult {
	pw.tel.Refused(reason, sr)
	return terms(pw.offers(price), res, reason, sr)
}

func (pw *paywall) unavailable(ctx context.Context, step string, err error) *mcp.CallToolResult {
	pw.log.LogAttrs(ctx, slog.LevelError, "trustmcp: "+step, slog.String("error", err.Error()))
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{
		Text: "payment processing unavailable: " + step + " failed; try again later"}}}
}

func joinReason(reason, message string) string {
	switch {
	case reason == "":
		return message
	case message == "":
		return reason
	}
	return reason + ": " + message
}

// offers returns the offers of price as the terms show them now: an
// "auth-capture" offer with the deadlines its payer signs.
func (pw *paywall) offers(price x402.Price) []x402.PaymentRequirements {
	if pw.escrow == nil {
		return price.Accepts
	}
	now := pw.now()
	out := make([]x402.PaymentRequirements, len(price.Accepts))
	for i, o := range price.Accepts {
		out[i] = pw.escrow.Offer(o, now)
	}
	return out
}
