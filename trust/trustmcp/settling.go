package trustmcp

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vouchkit/vouch/x402"
)

// settlingCall is what the Paywall keeps of a delivered result before it
// settles its payment (a tool that settles after it runs): the payer,
// the call it paid for (paidCall), the usage of an "upto" payment (nil
// for the whole maximum, or another scheme) and the result. The retry of
// a call whose settlement failed or went unanswered settles the payment
// again, for the same amount, and delivers the result once it settles.
type settlingCall struct {
	Payer  string              `json:"payer"`
	Call   string              `json:"call"`
	Usage  *x402.Usage         `json:"usage,omitempty"`
	Result *mcp.CallToolResult `json:"result"`
	// SettleBy is when the settlement its first use sent is answered at
	// the latest (then, plus SettleTimeout): a retry sooner, that is not
	// in the process that saw it answered, is told to come back rather
	// than send a second settlement while the first may still go through.
	SettleBy time.Time `json:"settle_by,omitzero"`
}

// settlingKey is where a result is kept while its payment settles.
func settlingKey(key string) string { return key + settlingSuffix }

// settlingSuffix ends the key of a result kept while its payment settles
// in the answer store.
const settlingSuffix = "#settling"

// keepSettling keeps sc, a delivered result, with its SettleBy set from
// now, under key before its
// payment is settled, so that no payer pays for a result its retry could
// not have: the caller settles nothing when it fails.
func (pw *paywall) keepSettling(ctx context.Context, key string, until time.Time, sc *settlingCall) error {
	sc.SettleBy = pw.now().Add(pw.cfg.SettleTimeout)
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), pw.cfg.SettleTimeout)
	defer cancel()
	b, err := json.Marshal(sc)
	if err != nil {
		return err
	}
	return pw.answers.Keep(ctx, settlingKey(key), sc.Payer, b, until)
}

// keptSettling returns the result kept under key while its payment
// settled (keepSettling), when it was kept for the call named call; it
// reports false when none is kept, or one kept for another call, which
// is not this call's to read.
func (pw *paywall) keptSettling(ctx context.Context, key, call string, now time.Time) (settlingCall, bool, error) {
	var sc settlingCall
	b, ok, err := pw.answers.Answer(ctx, settlingKey(key), now)
	if err != nil || !ok || json.Unmarshal(b, &sc) != nil || sc.Result == nil || sc.Call != call {
		return settlingCall{}, false, err
	}
	return sc, true, nil
}

// completeSettling answers the retry of the call named call, whose result
// sc was kept before its payment was settled and which has no settled
// result: the settlement failed or went unanswered, or the server stopped
// before it was answered. It settles p again, for the amount its first
// use charged (offer, at sc.Usage's amount for an "upto" payment), and
// returns the result with the settlement once it settles, kept from then
// on as any paid result; or the terms with the failed settlement, sc
// staying kept for a later retry. The facilitator settles a payment at
// most once, so the retry never pays twice: a settlement made whose
// answer was lost is refused as spent when sent again, and the retry
// gets that reason. The caller holds the payment's flight (startFlight),
// so that no other retry in this process settles it at the same time.
// Before sc's SettleBy, unless this process saw the first use's
// settlement answered, the retry is told to come back: the settlement
// may still go through, sent from another server.
func (pw *paywall) completeSettling(ctx context.Context, price x402.Price, res x402.ResourceInfo, tool string, p *x402.PaymentPayload, offer x402.PaymentRequirements,
	key, call string, until time.Time, sc settlingCall) *mcp.CallToolResult {
	if wait := sc.SettleBy.Sub(pw.now()); wait > 0 && !pw.answeredHere(key) {
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{
			Text: fmt.Sprintf("the payment's first use is settling it; try again in %d s", int(math.Ceil(wait.Seconds())))}}}
	}
	if sc.Usage != nil {
		offer.Amount = strconv.FormatUint(sc.Usage.Amount, 10)
	}
	sr := pw.settle(ctx, tool, p, offer, sc.Payer)
	if !sr.Success {
		return pw.refuse(price, res, "settlement failed: "+joinReason(sr.ErrorReason, sr.ErrorMessage), sr)
	}
	if sc.Usage != nil {
		sr.SetUsage(*sc.Usage)
	}
	pw.log.LogAttrs(ctx, slog.LevelInfo, "trustmcp: a kept result settled on its retry", slog.String("tool", tool), slog.String("payer", sr.Payer))
	pw.keep(ctx, key, sc.Payer, call, until, sc.Result, sr)
	ctr := sc.Result
	if ctr.Meta == nil {
		ctr.Meta = mcp.Meta{}
	}
	ctr.Meta[MetaPaymentResponse] = sr
	return ctr
}

// noteAnswered notes that the settlement sent under key, due by settleBy,
// was answered in this process without settling: a retry here need not
// wait for settleBy. Notes past their settleBy are dropped as new ones
// come, so that they hold only settlements answered within SettleTimeout.
func (pw *paywall) noteAnswered(key string, settleBy time.Time) {
	now := pw.now()
	pw.mu.Lock()
	defer pw.mu.Unlock()
	for k, by := range pw.answered {
		if !now.Before(by) {
			delete(pw.answered, k)
		}
	}
	if pw.answered == nil {
		pw.answered = make(map[string]time.Time)
	}
	pw.answered[key] = settleBy
}

// answeredHere reports whether noteAnswered noted key.
func (pw *paywall) answeredHere(key string) bool {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	_, ok := pw.answered[key]
	return ok
}
