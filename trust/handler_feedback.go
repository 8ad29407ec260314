package trust

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/vouchkit/vouch/internal/httpapi"
	"github.com/vouchkit/vouch/internal/jsonbody"
	"github.com/vouchkit/vouch/internal/traceparent"
	"github.com/vouchkit/vouch/internal/valid"
	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
)

// FeedbackPath is the route on which a caller reports the outcome of one
// of its trust calls (a [FeedbackRequest]).
const FeedbackPath = "/api/v4/feedback"

// FeedbackReporter is a [Caller] that learns from the outcomes of its
// calls: the [Service], and the [Client], which reports over HTTP. A
// [Handler] serves POST /api/v4/feedback on it.
type FeedbackReporter interface {
	// Feedback reports that the call named by id (its trace_id or the
	// receipt_id of its receipt), made by the caller of ctx, turned out
	// right or wrong (see Service.Feedback).
	Feedback(ctx context.Context, id string, right bool) error
}

// VerdictReporter is a [Caller] that also learns the true verdicts of
// its validations, whatever they answered, RETRY included: the
// [Service], and the [Client], which reports over HTTP. A [Handler]
// serves POST /api/v4/feedback with a verdict on it.
type VerdictReporter interface {
	// FeedbackVerdict reports that the claim of the validation named by
	// id, made by the caller of ctx, turned out to hold (VALID) or not
	// (INVALID) (see Service.FeedbackVerdict).
	FeedbackVerdict(ctx context.Context, id string, verdict router.Verdict) error
}

// FeedbackRequest is the body of POST /api/v4/feedback: exactly one of
// TraceID and ReceiptID names the call, and exactly one of Right and
// Verdict says what turned out.
type FeedbackRequest struct {
	// TraceID is the trace_id of the call's Response: a W3C trace id, 32
	// lowercase hex digits, not all zero.
	TraceID string `json:"trace_id,omitempty" validate:"required_without=ReceiptID,excluded_with=ReceiptID,max=255"`
	// ReceiptID is the receipt_id of the call's receipt: "rcpt_" and 26
	// characters of lowercase base32.
	ReceiptID string `json:"receipt_id,omitempty" validate:"required_without=TraceID,max=255"`
	// Right is true when the call's answer turned out right.
	Right *bool `json:"right,omitempty" validate:"required_without=Verdict,excluded_with=Verdict"`
	// Verdict is the true verdict of a validation's claim, VALID or
	// INVALID, which reports a call whatever it answered, RETRY included
	// (Service.FeedbackVerdict).
	Verdict router.Verdict `json:"verdict,omitempty" validate:"required_without=Right,omitempty,oneof=VALID INVALID"`
}

// feedbackValidator checks a FeedbackRequest's tags.
var feedbackValidator = valid.New(nil)

// Validate reports whether r is a valid request: a 400 *Error naming
// each field that fails, by its JSON path. A trace_id that is not a W3C
// trace id, which no call runs under, fails with the rule "pattern", and
// so does a receipt_id that is not a receipt id, which no receipt has.
func (r *FeedbackRequest) Validate() error {
	errs := feedbackValidator.Struct(r)
	if r.TraceID != "" && !traceparent.Valid(r.TraceID) && !slices.ContainsFunc(errs, func(e problem.FieldError) bool { return e.Field == "trace_id" }) {
		errs = append(errs, problem.FieldError{Field: "trace_id", Rule: "pattern",
			Message: "must be a W3C trace id, 32 lowercase hex digits not all zero: the trace_id of the call's answer (a receipt id goes in receipt_id)"})
	}
	if r.ReceiptID != "" && !receipt.ValidID(r.ReceiptID) && !slices.ContainsFunc(errs, func(e problem.FieldError) bool { return e.Field == "receipt_id" }) {
		errs = append(errs, problem.FieldError{Field: "receipt_id", Rule: "pattern",
			Message: `must be a receipt id, "rcpt_" and 26 lowercase base32 characters: the receipt_id of the call's receipt (a trace id goes in trace_id)`})
	}
	if len(errs) > 0 {
		return problem.Invalid(errs)
	}
	return nil
}

// emptyMembers refuses the members of a report given as "", each of
// which would read as absent: an empty verdict beside right, an empty
// trace_id beside receipt_id.
func emptyMembers(zeros []jsonbody.Member) error {
	errs := make([]problem.FieldError, len(zeros))
	for i, m := range zeros {
		errs[i] = problem.FieldError{Field: m.Path, Rule: "required", Message: "must not be empty (leave the member out)"}
	}
	return problem.Invalid(errs)
}

// FeedbackResponse is the answer of POST /api/v4/feedback: the report the
// service accepted, repeated. A repeat of a report adds nothing and gets
// the same answer.
type FeedbackResponse struct {
	// TraceID is the trace id the report named, if it named one.
	TraceID string `json:"trace_id,omitempty"`
	// ReceiptID is the receipt id the report named, if it named one.
	ReceiptID string `json:"receipt_id,omitempty"`
	// Right is the outcome reported, if the report gave one.
	Right *bool `json:"right,omitempty"`
	// Verdict is the true verdict reported, if the report gave one.
	Verdict router.Verdict `json:"verdict,omitempty"`
}

// prepareFeedback returns the endpoint function of POST /api/v4/feedback
// on c: decode the report, refusing unknown members, and pass it on as
// the request's caller's.
func prepareFeedback(c Caller) func(*http.Request, []byte) (httpapi.Run, error) {
	schema := jsonbody.SchemaOf(new(FeedbackRequest))
	return func(_ *http.Request, body []byte) (httpapi.Run, error) {
		req := new(FeedbackRequest)
		if err := schema.UnmarshalKnown(body, req); err != nil {
			return nil, err
		}
		if _, zeros := schema.Inspect(body); len(zeros) > 0 {
			return nil, emptyMembers(zeros)
		}
		if err := req.Validate(); err != nil {
			return nil, err
		}
		return func(ctx context.Context) (any, error) {
			ctx = WithCaller(ctx, owner(ctx))
			id := req.TraceID + req.ReceiptID // one of them is empty
			var err error
			if req.Right != nil {
				fr, ok := c.(FeedbackReporter)
				if !ok {
					return nil, outcomeProblem(ErrReputationOff)
				}
				err = fr.Feedback(ctx, id, *req.Right)
			} else {
				vr, ok := c.(VerdictReporter)
				if !ok {
					return nil, outcomeProblem(ErrReputationOff)
				}
				err = vr.FeedbackVerdict(ctx, id, req.Verdict)
			}
			if err != nil {
				return nil, outcomeProblem(err)
			}
			return &FeedbackResponse{TraceID: req.TraceID, ReceiptID: req.ReceiptID, Right: req.Right, Verdict: req.Verdict}, nil
		}, nil
	}
}

// receiptWithoutVotes says why a report on a receipt of the caller's
// that does not record its votes is refused, and what to send instead.
const receiptWithoutVotes = "the receipt does not record which sessions voted and which agreed: report the call by its trace_id, " +
	"or ask for receipts with include.consensus_snapshot and include.router_trace_refs"

// outcomeProblem returns the problem the route answers for err, an error
// of a Caller's Feedback, reading the router's sentinels as trust's for
// a Caller that passes a router's error on.
func outcomeProblem(err error) error {
	switch {
	case errors.Is(err, ErrReceiptWithoutVotes):
		return problem.New(http.StatusNotFound, problem.CodeUnknownCall, receiptWithoutVotes)
	case errors.Is(err, router.ErrUnknownCall):
		err = ErrUnknownCall
	case errors.Is(err, router.ErrReputationOff):
		err = ErrReputationOff
	case errors.Is(err, ErrExam):
		return problem.New(http.StatusServiceUnavailable, problem.CodeUnavailable,
			"the verdict is recorded, but the exam of its claim failed; report it again to run the exam")
	}
	return httpapi.OutcomeProblem(err, ErrUnknownCall, ErrReputationOff)
}

// Feedback reports the outcome of a trust call (POST /api/v4/feedback):
// the call named by id, the trace_id of its Response or the receipt_id of
// its receipt, that the Client made with the same API key, turned out
// right or wrong. It implements [FeedbackReporter]. A report the service
// accepts returns nil, and a repeat of it adds nothing and returns nil
// again. The service's refusals wrap the sentinels of [Service.Feedback],
// beside the *[Error]: ErrUnknownCall (404, code unknown_call) for an id
// that names no call of this caller's, another caller's among them, and
// ErrReputationOff (409, code reputation_off) for a service that weighs
// no votes by reputation. An id that starts "rcpt_", as receipt ids do,
// is sent as receipt_id, where one that is not a receipt id is a 400
// *[Error] naming receipt_id, any other as trace_id, where one that is
// not a W3C trace id is a 400 *[Error] naming trace_id.
func (c *Client) Feedback(ctx context.Context, id string, right bool) error {
	return c.feedback(ctx, id, &FeedbackRequest{Right: &right})
}

// FeedbackVerdict reports the true verdict of a validation (POST
// /api/v4/feedback with a verdict): the claim of the call named by id,
// as for Feedback, turned out to hold (VALID) or not (INVALID), whatever
// the call answered. It implements [VerdictReporter], and returns the
// errors Feedback does, and one for a verdict other than the two without
// a request.
func (c *Client) FeedbackVerdict(ctx context.Context, id string, verdict router.Verdict) error {
	if verdict != router.VerdictValid && verdict != router.VerdictInvalid {
		return fmt.Errorf("trust: a true verdict is VALID or INVALID, not %q", verdict)
	}
	return c.feedback(ctx, id, &FeedbackRequest{Verdict: verdict})
}

// feedback posts req, naming the call id as its trace_id, or as its
// receipt_id when id starts "rcpt_". It sends a key of its own, never
// ctx's (WithIdempotencyKey), which names the trust call reported on: the
// service counts a report made again as a repeat.
func (c *Client) feedback(ctx context.Context, id string, req *FeedbackRequest) error {
	req.TraceID = id
	if strings.HasPrefix(id, "rcpt_") {
		req.TraceID, req.ReceiptID = "", id
	}
	call := httpapi.Call{Op: "feedback", Method: http.MethodPost, Path: FeedbackPath, Body: req,
		Header: c.authHeader(router.VariantNormal)}
	var resp FeedbackResponse
	return httpapi.OutcomeError(c.core.Do(ctx, call, &resp), ErrUnknownCall, ErrReputationOff)
}
