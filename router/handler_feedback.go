package router

import (
	"context"

	"github.com/vouchkit/vouch/internal/httpapi"
	"github.com/vouchkit/vouch/internal/jsonbody"
	"github.com/vouchkit/vouch/internal/traceparent"
	"github.com/vouchkit/vouch/problem"
)

// OpFeedback reports the outcome of a version 3 call (POST
// /api/v3/feedback, a [FeedbackRequest]), for a Service that implements
// [FeedbackReporter].
const OpFeedback Operation = "feedback_v3"

// FeedbackReporter is a [Service] that learns from the outcomes of its
// calls: the [Engine], and the [Client], which reports over HTTP. A
// [Handler] serves POST /api/v3/feedback on it.
type FeedbackReporter interface {
	// Feedback reports that the version 3 call made under traceID by
	// the caller of ctx turned out right or wrong (see Engine.Feedback).
	Feedback(ctx context.Context, traceID string, right bool) error
}

// FeedbackRequest is the body of POST /api/v3/feedback.
type FeedbackRequest struct {
	// TraceID is the W3C trace id the call ran under: the one its
	// traceparent header carried, 32 lowercase hex digits, not all zero.
	TraceID string `json:"trace_id" validate:"required,max=255"`
	// Right is true when the call's answer turned out right. It is
	// required: a report that says neither is refused.
	Right *bool `json:"right" validate:"required"`
}

// Validate reports whether r is a valid request: a 400 *Error naming
// each field that fails, by its JSON path. A trace_id that is not a W3C
// trace id, which no call runs under (see [WithTraceID]), fails with the
// rule "pattern".
func (r *FeedbackRequest) Validate() error {
	var extra []problem.FieldError
	if r.TraceID != "" && len(r.TraceID) <= 255 && !traceparent.Valid(r.TraceID) {
		extra = append(extra, problem.FieldError{Field: "trace_id", Rule: "pattern",
			Message: "must be a W3C trace id, 32 lowercase hex digits not all zero: the one the call's traceparent carried"})
	}
	return check(r, extra...)
}

// FeedbackResponse is the answer of POST /api/v3/feedback: the report
// the server accepted, repeated. A repeat of a report adds nothing and
// gets the same answer.
type FeedbackResponse struct {
	// TraceID is the trace id the report named.
	TraceID string `json:"trace_id"`
	// Right is the outcome reported.
	Right bool `json:"right"`
}

// feedbackRunner returns the endpoint function of POST /api/v3/feedback on
// svc: decode the report, refusing unknown members, and pass it on.
func feedbackRunner(svc Service) func(body []byte) (httpapi.Run, error) {
	schema := jsonbody.SchemaOf(new(FeedbackRequest))
	return func(body []byte) (httpapi.Run, error) {
		req := new(FeedbackRequest)
		if err := schema.UnmarshalKnown(body, req); err != nil {
			return nil, err
		}
		if err := req.Validate(); err != nil {
			return nil, err
		}
		return func(ctx context.Context) (any, error) {
			fr, ok := svc.(FeedbackReporter)
			if !ok {
				return nil, httpapi.OutcomeProblem(ErrReputationOff, ErrUnknownCall, ErrReputationOff)
			}
			if err := fr.Feedback(ctx, req.TraceID, *req.Right); err != nil {
				return nil, httpapi.OutcomeProblem(err, ErrUnknownCall, ErrReputationOff)
			}
			return &FeedbackResponse{TraceID: req.TraceID, Right: *req.Right}, nil
		}, nil
	}
}

// Feedback reports the outcome of a version 3 call the router decided
// (POST /api/v3/feedback): the call the Client made under traceID (see
// [WithTraceID]) with the same API key turned out right or wrong. It
// implements [FeedbackReporter]. A report the server accepts returns nil,
// and a repeat of it adds nothing and returns nil again. The server's
// refusals wrap the sentinels of [Engine.Feedback], beside the *[Error]:
// ErrUnknownCall (404, code unknown_call) for a call the server does not
// remember among this caller's, another caller's call among them, and
// ErrReputationOff (409, code reputation_off) for a server that keeps no
// reputation. A traceID that is not a W3C trace id is a 400 *Error
// naming trace_id. A report sends an Idempotency-Key of its own, never the one
// ctx names ([WithIdempotencyKey]), which is the call's: the server counts
// a report made again as a repeat.
func (c *Client) Feedback(ctx context.Context, traceID string, right bool) error {
	req := &FeedbackRequest{TraceID: traceID, Right: &right}
	var resp FeedbackResponse
	ctx = WithIdempotencyKey(ctx, "") // the call's key would be refused: 422
	return httpapi.OutcomeError(c.do(ctx, OpFeedback, VariantNormal, req, &resp), ErrUnknownCall, ErrReputationOff)
}
