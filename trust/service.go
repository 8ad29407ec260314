package trust

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/vouchkit/vouch/internal/release"
	"github.com/vouchkit/vouch/internal/traceparent"
	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
)

// Version is the release of the trust service, reported as
// service_version: the release of the vouch module.
const Version = release.Version

// DefaultEscalationThreshold is the default of [WithEscalationThreshold]:
// 0, so that by default a single run never settles an adaptive call. A
// worker's own confidence is seldom calibrated; docs/ACCURACY.md measures
// what trusting it costs in accuracy and saves in runs.
const DefaultEscalationThreshold = 0.0

// Caller is anything that answers trust calls: the in-process [Service]
// and the remote [Client]. [NewHandler] serves any Caller.
//
// Implementations must be safe for concurrent use, and Call must not
// modify req. A status of RETRY, NEEDS_SPEC or INCONCLUSIVE is a Response
// with a nil error; a non-nil error means there is no Response.
// NewHandler answers an *Error with its own status, a context deadline
// with 504, an error of a request its client cancelled with 503, and any
// other error with a 500 that reveals nothing of it.
type Caller interface {
	// Call answers one trust call (see [Service.Call]).
	Call(ctx context.Context, req *Request) (*Response, error)
}

// Error is the error of a trust call: an RFC 9457 problem,
// problem.Details, with HTTP Status, a Code (one of the problem.Code
// constants), Detail and, for invalid input, the failing fields by JSON
// path in Errors. It is the same type as router.Error, so errors.As finds
// it whichever layer failed; compare its Code, never its text.
type Error = problem.Details

// Service answers trust calls by running router calls on a router.Service:
// the in-process router.Engine or a remote router.Client. It is safe for
// concurrent use. Build it with [New].
type Service struct {
	router    router.Service
	variant   router.Variant
	session   router.SessionID
	pool      []router.SessionID
	threshold float64
	floor     float64 // WithPluralityFloor; 0: DefaultPluralityFloor
	key       func(answer any) (string, error)
	grouper   Grouper // WithGrouper
	logger    *slog.Logger
	issuer    *receipt.Issuer
	signed    bool
	next      atomic.Uint64     // rotates adaptive's candidate sessions
	check     int               // WithLeaderCheck; 0: never
	led       atomic.Uint64     // counts the adaptive calls a leader decided, for WithLeaderCheck
	tel       *serviceTelemetry // spans and metrics (WithTelemetry)
	noRep     bool              // WithoutReputation
	keep      keeper            // the router's reputation; nil when off
	noExams   bool              // WithoutExams
	exams     *exams            // the validations FeedbackVerdict may examine; nil when none
}

// New returns a Service running its router calls on rs.
//
// It fails when rs is nil, when an option is out of range or cannot be
// applied (WithPluralityFloor outside [DefaultPluralityFloor, 1), a key
// WithSigningKey cannot sign with, a file WithSigningKeyFile cannot read,
// WithReceipts given after another receipt option), and with
// WithSignedReceipts when no receipt Signer is configured. The errors say
// which option failed; they are meant to stop a host at start-up.
func New(rs router.Service, opts ...Option) (*Service, error) {
	if rs == nil {
		return nil, errors.New("trust: New needs a router.Service")
	}
	s := &Service{router: rs, threshold: DefaultEscalationThreshold, check: DefaultLeaderCheckEvery, tel: newServiceTelemetry(nil, nil)}
	for _, o := range opts {
		if err := o(s); err != nil {
			return nil, err
		}
	}
	if s.signed && (s.issuer == nil || s.issuer.Signer == nil) {
		return nil, errors.New("trust: signed receipts asked for, but no Issuer with a Signer is configured (WithReceipts)")
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	s.issuer = s.tel.logged(s.issuer) // WithTelemetry with the no-op providers left s.tel nil: no hooks
	s.useReputation()
	return s, nil
}

// Call validates req, runs the router calls its mode and policy need, and
// returns one unified response. A status of RETRY, NEEDS_SPEC or
// INCONCLUSIVE is an answer, not an error. Errors are an *Error (400 for
// an invalid request, 503 when the receipt it asked for cannot be stored,
// or the router's *Error when no step could run), the context's error
// when the caller cancels (below), or, over a remote router.Client, the
// client's own errors when no step could run: a transport failure after
// its retries, or one wrapping router.ErrMalformedResponse,
// router.ErrResponseTooLarge or router.ErrNoVariant, which carry no
// *Error. A ctx carrying a trace id that is no W3C trace id (32 lowercase
// hex digits, not all zero; see router.WithTraceID) is refused with an
// error naming it, before any run. Over any router.Service, a fail_hard disagreement (or a judged
// delegation's failed judges) whose evidence in the problem's extra does
// not decode ends the call with an error wrapping
// router.ErrMalformedResponse that names the member, never read as no
// runs or as the runs decoded before the fault; for one of adaptive's
// runs such evidence makes the run ERROR, its error naming the member.
//
// A deadline on ctx is the safe way to bound a call: over a router.Engine
// the call answers before it from the votes in, the runs still out
// recorded as TIMEOUT (adaptive launches no run in its last 100ms, nor
// does a judged delegation launch a second producer), and with no vote
// in it fails with a 504 *Error with code timeout. A judged delegation
// whose candidate came in but whose judges all failed or ran out of time
// answers RETRY with the candidate, its judges' runs recorded as ERROR or
// TIMEOUT. A caller that cancels ctx, rather than let its deadline come,
// gets the context's error (context.Canceled), at any point of the call:
// never an answer from the runs in when it left.
//
// A validation that teaches the router is remembered for the exam of a
// later report (see Service.FeedbackVerdict): the service keeps a copy of
// req that shares its maps and byte slices, so do not modify those in
// place after the call.
func (s *Service) Call(ctx context.Context, req *Request) (resp *Response, err error) {
	if req == nil {
		return nil, problem.New(http.StatusBadRequest, problem.CodeInvalidRequest, "trust: the request is nil")
	}
	if err := traceparent.Check(ctx); err != nil {
		return nil, fmt.Errorf("trust: %w", err)
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if req.Receipt.Requested() && s.issuer == nil {
		return nil, problem.Invalid([]problem.FieldError{{
			Field: "receipt.mode", Rule: "unavailable",
			Message: "this service issues no receipts; omit the receipt block or use mode none",
		}})
	}
	ctx, span := s.tel.startCall(ctx, req) // a recorded span's trace id becomes the call's
	defer func() {
		if err != nil {
			s.tel.failed(ctx, req, err)
		}
		endSpan(span, err)
	}()
	traceID := traceparent.From(ctx)
	if !traceparent.Valid(traceID) {
		traceID = traceparent.NewTraceID()
		if sc := trace.SpanContextFromContext(ctx); sc.IsValid() { // the caller's, with our telemetry off
			traceID = sc.TraceID().String()
		}
		ctx = traceparent.With(ctx, traceID)
	}
	if s.variant != "" {
		ctx = router.WithVariant(ctx, s.variant)
	}
	if s.groups(req) { // the router's answer key is not the call's
		ctx = router.WithoutLearning(ctx)
	}
	if req.Mode == ModeDelegation { // its router calls name no claim type: the call's scope
		ctx = router.WithScope(ctx, scope(req))
	}

	if req.Delegation.judged() {
		d, err := s.judged(ctx, req, traceID)
		if err != nil {
			return nil, err
		}
		return s.finish(ctx, span, req, d)
	}
	var steps []stepResult
	var cals *scopeReading
	switch x := examOf(ctx); {
	case req.Policy == PolicyAdaptive:
		var err error
		if steps, cals, err = s.adaptive(ctx, req); err != nil {
			return nil, err
		}
		if err := noVoteBy(ctx, steps); err != nil {
			return nil, err
		}
	case x != nil:
		var err error
		if steps, cals, err = s.examRuns(ctx, req, x); err != nil {
			return nil, err
		}
	}
	if steps == nil {
		cals = s.readCall(ctx, req)
		ctx = cals.handedCall(ctx, req)
		var id router.SessionID // fast runs on the single session, if any
		if req.Policy == PolicyFast {
			id = s.session
		}
		st, err := s.runOn(ctx, req, plan(req.Policy), id)
		if err != nil {
			return nil, err
		}
		steps = []stepResult{st}
	}
	if err := cancelled(ctx); err != nil { // the caller left: no answer
		return nil, err
	}
	final, err := s.tally(ctx, req, steps, cals)
	if err != nil {
		return nil, err
	}
	at := s.now()
	s.learn(ctx, req, final, steps, traceID, cals, at)
	return s.finish(ctx, span, req, decision{resp: s.respond(req, steps, final, traceID), final: final, steps: steps, at: at})
}

// A decision is what a call decided: its response, the tally its receipt
// records, every step that ran, and when it was decided (the time of the
// call its router's ledger remembers, and its receipt's timestamp).
type decision struct {
	resp  *Response
	final stepResult
	steps []stepResult
	at    time.Time
}

// now returns the time of a decision: by the receipt issuer's clock, if it
// has one, to the millisecond a receipt's timestamp records.
func (s *Service) now() time.Time {
	now := time.Now
	if s.issuer != nil && s.issuer.Now != nil {
		now = s.issuer.Now
	}
	return now().UTC().Truncate(time.Millisecond)
}

// finish issues the receipt d asks for, if any, and records the answer.
func (s *Service) finish(ctx context.Context, span trace.Span, req *Request, d decision) (*Response, error) {
	resp := d.resp
	traceID := resp.TraceID
	resp.Evidence.Payment = escrowPayment(ctx, resp)
	if req.Receipt.Requested() {
		ictx, ispan := s.tel.startIssue(ctx, req) // the log append, when the store keeps a log, is its child
		p := s.receiptParams(ctx, req, resp, d.final, d.steps)
		p.At = d.at
		issued, err := s.issuer.Issue(ictx, p)
		s.tel.issued(ictx, ispan, issued, err)
		if err != nil {
			s.logger.ErrorContext(ctx, "trust: issuing receipt", "trace_id", traceID, "error", err)
			return nil, problem.New(http.StatusServiceUnavailable, problem.CodeUnavailable,
				"the decision was made but its receipt could not be issued; retry the call")
		}
		resp.Receipt = issued.ResponseMember()
		resp.ReceiptClamped = receiptClamps(s.issuer.Environment, req.Receipt, issued.Receipt)
	}
	s.tel.answered(ctx, span, req, resp)
	return resp, nil
}
