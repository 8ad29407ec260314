package trustmcp

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"maps"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/trustpay"
	"github.com/vouchkit/vouch/x402"
)

// ToolGate decides whether a paid tool's result is delivered, and its
// payment settled: it returns nil to deliver result, or the result to
// send instead, which [Paywall] marks as a tool error and never settles.
// It runs under the tool's time budget, after the tool, and only on a
// result that is not a tool error.
//
// One payment has one outcome: a refusal is kept with the payment (in
// PaywallConfig.Answers) until its replay record expires, and a retry with
// the same payment gets it again, without the tool running, the check
// running or anything settling. A refused payment is spent; to buy again,
// the caller signs a new one.
type ToolGate func(ctx context.Context, call *mcp.CallToolRequest, result *mcp.CallToolResult) (refusal *mcp.CallToolResult)

// Verdict is the structuredContent of a result a [ValidateResult] gate
// refused.
type Verdict struct {
	// Status is the trust status of the validation, or TIMEOUT when it
	// did not finish within the tool's time budget, or ERROR when it
	// could not run.
	Status string `json:"status"`
	// Confidence and Evidence are the validation's.
	Confidence float64         `json:"confidence"`
	Evidence   *trust.Evidence `json:"evidence,omitempty"`
	// ReceiptID names the validation's receipt, when the route asked for
	// one.
	ReceiptID string `json:"receipt_id,omitempty"`
	// Settled is false: the payment was not settled.
	Settled bool `json:"settled"`
}

// ValidateResult returns a gate that validates each result with rt
// (trustpay.Route.Judge: through rt.Caller at rt's tier against
// rt.Spec), the tool's arguments as the task input and the result's
// structuredContent, or else its text, as the claimed result, and
// delivers only a VALID one. A refusal is a tool error whose
// structuredContent is a [Verdict] and whose text says why the payment
// was not settled.
func ValidateResult(rt trustpay.Route) ToolGate {
	return func(ctx context.Context, call *mcp.CallToolRequest, result *mcp.CallToolResult) *mcp.CallToolResult {
		var in router.Input
		if err := in.UnmarshalJSON(call.Params.Arguments); err != nil {
			in = router.NewStringInput(string(call.Params.Arguments))
		}
		j := rt.Judge(ctx, in, claimOf(result), rt.Receipt)
		switch {
		case j.Deliver():
			// An escrowed call records the verdict with its capture;
			// any other call keeps none (ErrNotUpto, ErrUsageClosed).
			_ = x402.ReportVerdict(ctx, j.Status)
			return nil
		case j.Status == trustpay.StatusTimeout:
			return refusal(Verdict{Status: j.Status}, "the validation did not finish within the tool's time budget")
		case j.Status == trustpay.StatusCancelled:
			return refusal(Verdict{Status: j.Status}, "the call was cancelled before its result was validated")
		case j.Status == trustpay.StatusError:
			return refusal(Verdict{Status: j.Status}, "the result could not be validated")
		}
		out := j.Response
		return refusal(Verdict{Status: j.Status, Confidence: out.Confidence, Evidence: &out.Evidence, ReceiptID: j.ReceiptID},
			fmt.Sprintf("the result was judged %s (confidence %.2f)", out.Status, out.Confidence))
	}
}

// claimOf is a tool result as a claimed result: its structured content,
// or the text of its content.
func claimOf(r *mcp.CallToolResult) json.RawMessage {
	if r.StructuredContent != nil {
		if b, err := json.Marshal(r.StructuredContent); err == nil {
			return b
		}
	}
	var parts []string
	for _, c := range r.Content {
		if t, ok := c.(*mcp.TextContent); ok {
			parts = append(parts, t.Text)
		}
	}
	return trust.JSON(strings.Join(parts, "\n"))
}

func refusal(v Verdict, why string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, StructuredContent: v,
		Content: []mcp.Content{&mcp.TextContent{Text: "not delivered: " + why + "; the payment was not settled"}}}
}

// check runs the call's gate, if its tool has one.
func (pw *paywall) check(ctx context.Context, call *mcp.CallToolRequest, result *mcp.CallToolResult) *mcp.CallToolResult {
	gate := pw.cfg.Gates[call.Params.Name]
	if gate == nil {
		return nil
	}
	r := gate(ctx, call, result)
	if r == nil {
		return nil
	}
	r.IsError = true
	pw.tel.Refused("not_delivered", nil)
	pw.log.LogAttrs(ctx, slog.LevelInfo, "trustmcp: result not delivered, payment not settled", slog.String("tool", call.Params.Name))
	return r
}

// refusedKey is where a payment's refusal is kept in the answer store.
func refusedKey(key string) string { return key + refusedSuffix }

// refusedSuffix ends the key of a refusal in the answer store.
const refusedSuffix = "#refused"

// keepRefusal keeps the refusal r of payer's payment under key, with the
// call it refused (paidCall), so that a retry of that call gets it again.
func (pw *paywall) keepRefusal(ctx context.Context, key, payer, call string, until time.Time, r *mcp.CallToolResult) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), pw.cfg.SettleTimeout)
	defer cancel()
	kept := *r
	kept.Meta = maps.Clone(r.Meta)
	if kept.Meta == nil {
		kept.Meta = mcp.Meta{}
	}
	kept.Meta[metaPaidCall] = call
	b, err := json.Marshal(&kept)
	if err == nil {
		err = pw.answers.Keep(ctx, refusedKey(key), payer, b, until)
	}
	if err != nil {
		pw.log.LogAttrs(ctx, slog.LevelWarn, "trustmcp: keeping a refusal for a retry", slog.String("error", err.Error()))
	}
}

// keptRefusal returns the refusal kept for the payment under key, when it
// refused the call named call (paidCall): the refusal of another caller's
// call, or of another call, is not this call's to read.
func (pw *paywall) keptRefusal(ctx context.Context, key, call string, now time.Time) (*mcp.CallToolResult, bool) {
	b, ok, err := pw.answers.Answer(ctx, refusedKey(key), now)
	r := new(mcp.CallToolResult)
	if err != nil || !ok || json.Unmarshal(b, r) != nil {
		return nil, false
	}
	if refused, _ := r.Meta[metaPaidCall].(string); refused != call {
		return nil, false
	}
	delete(r.Meta, metaPaidCall)
	if len(r.Meta) == 0 {
		r.Meta = nil
	}
	return r, true
}
