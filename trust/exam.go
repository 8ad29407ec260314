package trust

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"go.opentelemetry.io/otel/trace"

	"github.com/vouchkit/vouch/internal/fairstore"
	"github.com/vouchkit/vouch/internal/traceparent"
	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
)

// ErrExam wraps the error of an exam that failed after its call's true
// verdict was recorded (see Service.FeedbackVerdict): the report stands,
// and reporting the same verdict again runs the exam again.
var ErrExam = errors.New("trust: the verdict is recorded, but its exam failed")

// WithoutExams makes a report on a validation (Feedback, FeedbackVerdict)
// teach the call's own votes only, running no exam (see
// Service.FeedbackVerdict).
func WithoutExams() Option {
	return func(s *Service) error { s.noExams = true; return nil }
}

// examKey names a remembered validation: its caller and trace id.
type examKey struct{ caller, traceID string }

// String returns k as one key of the exams' store.
func (k examKey) String() string { return fairstore.Key(k.caller, k.traceID) }

// An exam is a remembered validation that a true verdict may examine:
// its request, and once examined the trace id of the oracle call that
// examined it.
type exam struct {
	mu   sync.Mutex // held while the exam runs, so that it runs once
	req  Request
	call string // the examining call's trace id; empty until it ran
}

// exams remembers the latest validations that teach, by caller and trace
// id, for FeedbackVerdict to examine: at most max of them and maxBytes of
// their requests' JSON members (a request larger than that alone is not
// remembered). When full, it forgets the oldest exam of the caller
// holding the most, as the router's ledger forgets per caller: one
// caller's stream of calls forgets its own, never another's. An
// anonymous caller named by an IPv6 address counts as its /64.
type exams struct {
	drawn    atomic.Uint64 // the exams drawn so far: each one's seed (see Service.examRuns)
	kept     fairstore.Store[*exam]
	max      int
	maxBytes int64
}

// maxExamBytes bounds the requests the exams of a Service keep: 64 MiB,
// room for 10,000 validations of 6 KiB, or 64 of the largest bodies.
const maxExamBytes = 64 << 20

func newExams(max int) *exams {
	return &exams{max: max, maxBytes: maxExamBytes}
}

// requestSize is about what req holds: its JSON members and strings.
func requestSize(req *Request) int64 {
	t := req.Task
	return int64(256 + len(t.Type) + len(t.Input.Raw()) + len(t.Spec) + len(t.ClaimedResult) + len(t.DisputeContext))
}

// put remembers req under k, in place of any request remembered there.
// Exams never expire: they go as others arrive.
func (e *exams) put(k examKey, req *Request) {
	x := fairstore.Entry[*exam]{Key: k.String(), Owner: fairstore.OwnerOf(k.caller, fairstore.IPv6OwnerBits), Value: &exam{req: *req}, Size: requestSize(req)}
	e.kept.Put(time.Time{}, x, e.max, e.maxBytes)
}

// get returns the exam remembered under k, if any.
func (e *exams) get(k examKey) (*exam, bool) {
	return e.kept.Get(k.String(), time.Time{})
}

// examining marks the context of an exam's own call, which is not
// remembered for an exam of its own; its value is the examined call
// (see examOf).
type examining struct{}

// isExam reports whether ctx is an exam's own call.
func isExam(ctx context.Context) bool { return ctx.Value(examining{}) != nil }

// remember keeps req, a validation that taught the router under
// traceID, for an exam, unless s runs none or req is itself an exam.
func (s *Service) remember(ctx context.Context, req *Request, traceID string) {
	if s.exams == nil || req.Mode != ModeValidation || isExam(ctx) {
		return
	}
	s.exams.put(examKey{CallerFrom(ctx), traceID}, req)
}

// examine asks the claim of the caller's validation traced as id (the
// trace id its report landed on, which s may remember for an exam) of
// the pool again, at the oracle tier (Service.examRuns), and reports
// verdict, the claim's true verdict, on that exam too: the first time,
// it makes the exam's call; afterwards it reports verdict on the call it
// made, which counts as a repeat or replaces the report before, as on
// any call. Nothing happens for an id s remembers no exam under, nor
// over a router that can never serve the oracle tier (the call is
// refused as a bad request).
func (s *Service) examine(ctx context.Context, id string, verdict router.Verdict) error {
	if s.exams == nil {
		return nil
	}
	x, ok := s.exams.get(examKey{CallerFrom(ctx), id})
	if !ok {
		return nil
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	if x.call == "" {
		req := x.req
		req.Policy, req.Receipt = PolicyOracle, receipt.Request{}
		first, _ := s.keep.Calls().Call(CallerFrom(ctx), id)
		// The exam is a call of its own, in a trace of its own: not in the
		// report's span, whose trace may be the reported call's (a caller
		// reporting in the call's trace), which would key the exam's call
		// as the call it examines.
		ectx := trace.ContextWithSpanContext(ctx, trace.SpanContext{})
		ectx = traceparent.With(context.WithValue(ectx, examining{}, examinedCall(first, s.exams.drawn.Add(1))), traceparent.NewTraceID())
		resp, err := s.Call(ectx, &req)
		if p := (*problem.Details)(nil); errors.As(err, &p) && p.Status == http.StatusBadRequest {
			return nil // too few sessions for the oracle tier
		}
		if err != nil {
			return fmt.Errorf("%w: %w", ErrExam, err)
		}
		x.call = resp.TraceID
		s.markAgain(ctx, x.call, id)
	}
	_, err := s.report(ctx, x.call, against(verdict))
	if err != nil && !errors.Is(err, ErrUnknownCall) { // an exam whose votes tied teaches nothing
		return fmt.Errorf("%w: %w", ErrExam, err)
	}
	return nil
}

// markAgain marks the remembered exam call of the caller's traced as
// exam as one that asked again the claim of the call traced as first
// (reputation.Call.Again), so that their reports teach each session
// once.
func (s *Service) markAgain(ctx context.Context, exam, first string) {
	calls, caller := s.keep.Calls(), CallerFrom(ctx)
	e, ok := calls.Call(caller, exam)
	f, fok := calls.Call(caller, first)
	if ok && fok {
		calls.PutCall(caller, exam, e.Again(f))
	}
}

// against returns what a report of verdict, a claim's true verdict,
// reads of a call: whether its winning verdict was right, and false when
// it kept none.
func against(verdict router.Verdict) func(reputation.Call) (right, ok bool) {
	return func(c reputation.Call) (bool, bool) {
		return c.Label == string(verdict), c.Label != ""
	}
}

// trueVerdict is the true verdict of a validation whose votes' winning
// verdict was label when the host reports it right or wrong; empty when
// label is not one of the two verdicts.
func trueVerdict(label string, right bool) router.Verdict {
	switch {
	case label != string(router.VerdictValid) && label != string(router.VerdictInvalid):
		return ""
	case right:
		return router.Verdict(label)
	case label == string(router.VerdictValid):
		return router.VerdictInvalid
	}
	return router.VerdictValid
}
