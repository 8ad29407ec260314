package trustmcp

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vouchkit/vouch/internal/traceparent"
	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// ToolReportOutcome is the name of the tool that reports whether a
// decided call turned out right, listed when Config.Caller is a
// trust.FeedbackReporter (trust.Service and trust.Client are).
const ToolReportOutcome = "report_outcome"

// ReportOutcomeArgs are the arguments of report_outcome: each field is
// the argument its JSON name names, described by its jsonschema tag in
// the tool's input schema. Exactly one of trace_id and receipt_id names
// the call, and exactly one of right and verdict says what turned out.
type ReportOutcomeArgs struct {
	TraceID   string `json:"trace_id,omitempty" jsonschema:"the trace_id of the call's answer, 32 lowercase hex digits; give it or receipt_id"`
	ReceiptID string `json:"receipt_id,omitempty" jsonschema:"the receipt_id of the call's receipt, rcpt_ and 26 characters; give it or trace_id"`
	Right     *bool  `json:"right,omitempty" jsonschema:"true when the call's answer turned out right, false when wrong; give it or verdict"`
	Verdict   string `json:"verdict,omitempty" jsonschema:"VALID when a validation's claim turned out to hold, INVALID when not, whatever the call answered (RETRY included); give it or right"`
}

// OutcomeResult is the answer of report_outcome: the report the service
// accepted. A repeat of a report adds nothing and gets the same answer.
type OutcomeResult struct {
	ID      string `json:"id" jsonschema:"the trace_id or receipt_id the report named"`
	Right   *bool  `json:"right,omitempty" jsonschema:"the outcome reported, if the report gave one"`
	Verdict string `json:"verdict,omitempty" jsonschema:"the true verdict reported, if the report gave one"`
}

// addReportOutcome lists report_outcome on s when the Caller takes
// reports.
func (t *tools) addReportOutcome(s *mcp.Server) error {
	if _, ok := t.cfg.Caller.(trust.FeedbackReporter); !ok {
		return nil
	}
	return addTool(s, t.log, &mcp.Tool{
		Name:        ToolReportOutcome,
		Annotations: &mcp.ToolAnnotations{IdempotentHint: true, DestructiveHint: new(false), OpenWorldHint: new(false)},
		Title:       "Report a call's outcome",
		Description: "Tell the service whether one of your earlier calls turned out right (a dispute, a review, a later fact), naming it by the trace_id of its answer or the receipt_id of its receipt: " +
			"the workers that backed the answer gain or lose reliability and later confidence is calibrated on it. " +
			"For a validation, give the claim's true verdict instead of right, which reports a call whatever it answered, RETRY included. " +
			"Only your own calls can be reported; a repeat adds nothing, the opposite report replaces the first. " +
			"Costs you nothing: the first report on a validation has the service ask its workers the claim again, to learn from the answer.",
	}, t.reportOutcome)
}

func (t *tools) reportOutcome(ctx context.Context, req *mcp.CallToolRequest, args ReportOutcomeArgs) (*mcp.CallToolResult, *OutcomeResult, error) {
	if err := emptyArgument(req.Params.Arguments, "trace_id", "receipt_id", "verdict"); err != nil {
		return nil, nil, err
	}
	id, err := args.id()
	if err != nil {
		return nil, nil, err
	}
	if args.Right != nil {
		err = t.cfg.Caller.(trust.FeedbackReporter).Feedback(callerContext(ctx, req), id, *args.Right)
	} else if vr, ok := t.cfg.Caller.(trust.VerdictReporter); ok {
		err = vr.FeedbackVerdict(callerContext(ctx, req), id, router.Verdict(args.Verdict))
	} else {
		err = trust.ErrReputationOff // a Caller that takes outcomes but no verdicts
	}
	switch {
	case errors.Is(err, trust.ErrReceiptWithoutVotes):
		return nil, nil, &ArgumentError{Argument: "receipt_id", Message: "names a receipt that does not record which sessions voted and which agreed: give the call's trace_id"}
	case errors.Is(err, trust.ErrUnknownCall):
		return nil, nil, fmt.Errorf("%s: no call %q of this caller's is remembered (404 unknown_call)", ToolReportOutcome, id)
	case errors.Is(err, trust.ErrReputationOff):
		return nil, nil, fmt.Errorf("%s: the service keeps no reputation: an outcome teaches it nothing (409 reputation_off)", ToolReportOutcome)
	case err != nil:
		return nil, nil, t.failure(ctx, ToolReportOutcome, "the trust service", err)
	}
	word := "the verdict " + args.Verdict
	switch {
	case args.Right == nil:
	case *args.Right:
		word = "right"
	default:
		word = "wrong"
	}
	return textResult(fmt.Sprintf("reported %s as %s", id, word)), &OutcomeResult{ID: id, Right: args.Right, Verdict: args.Verdict}, nil
}

// emptyArgument returns an *ArgumentError naming the first of names that
// raw, a tool's arguments, gives as "", which would read as absent: an
// empty verdict beside right, an empty trace_id beside receipt_id.
func emptyArgument(raw json.RawMessage, names ...string) error {
	var args map[string]json.RawMessage
	if json.Unmarshal(raw, &args) != nil {
		return nil
	}
	for _, name := range names {
		if string(args[name]) == `""` {
			return &ArgumentError{Argument: name, Message: "must not be empty (leave it out)"}
		}
	}
	return nil
}

// id returns the id the arguments name, or an *ArgumentError.
func (a *ReportOutcomeArgs) id() (string, error) {
	switch {
	case a.TraceID == "" && a.ReceiptID == "":
		return "", &ArgumentError{Argument: "trace_id", Message: "is required, or receipt_id: the call's trace_id or its receipt's receipt_id"}
	case a.TraceID != "" && a.ReceiptID != "":
		return "", &ArgumentError{Argument: "receipt_id", Message: "names the call a second time: give trace_id or receipt_id, not both"}
	case a.TraceID != "" && !traceparent.Valid(a.TraceID):
		return "", &ArgumentError{Argument: "trace_id", Message: "must be a W3C trace id, 32 lowercase hex digits not all zero: the trace_id of the call's answer (a receipt id goes in receipt_id)"}
	case a.ReceiptID != "" && !receipt.ValidID(a.ReceiptID):
		return "", &ArgumentError{Argument: "receipt_id", Message: `must be a receipt id, "rcpt_" and 26 lowercase base32 characters: the receipt_id of the call's receipt (a trace id goes in trace_id)`}
	case a.Right == nil && a.Verdict == "":
		return "", &ArgumentError{Argument: "right", Message: "is required, or verdict: true when the call's answer turned out right, false when wrong"}
	case a.Right != nil && a.Verdict != "":
		return "", &ArgumentError{Argument: "verdict", Message: "says what turned out a second time: give right or verdict, not both"}
	case a.Verdict != "" && a.Verdict != string(router.VerdictValid) && a.Verdict != string(router.VerdictInvalid):
		return "", &ArgumentError{Argument: "verdict", Message: fmt.Sprintf("is VALID or INVALID, not %q", a.Verdict)}
	}
	return a.TraceID + a.ReceiptID, nil
}
