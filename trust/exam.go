package trust

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"

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

// An exam is a remembered validation that a true verdict may examine:
// its request, and once examined the trace id of the oracle call that
// examined it.
type exam struct {
	mu   sync.Mutex // held while the exam runs, so that it runs once
	req  Request
	size int64  // requestSize of req
	call string // the examining call's trace id; empty until it ran
}

// exams remembers the latest validations that teach, by caller and trace
// id, for FeedbackVerdict to examine: at most max of them and maxBytes of
// their requests' JSON members. When full, it forgets the oldest exam of
// the caller holding the most bytes (the first such caller to have
// called, on a tie), as the router's ledger forgets per caller: one
// caller's stream of calls forgets its own, never another's.
type exams struct {
	mu       sync.Mutex
	max      int
	maxBytes int64
	byKey    map[examKey]*exam
	callers  []string             // in the order they first called
	byAge    map[string][]examKey // each caller's keys, the oldest first
	bytes    map[string]int64     // each caller's requests' size
	n        int
	total    int64
}

// maxExamBytes bounds the requests the exams of a Service keep: 64 MiB,
// room for 10,000 validations of 6 KiB, or 64 of the largest bodies.
const maxExamBytes = 64 << 20

func newExams(max int) *exams {
	return &exams{max: max, maxBytes: maxExamBytes, byKey: make(map[examKey]*exam),
		byAge: make(map[string][]examKey), bytes: make(map[string]int64)}
}

// requestSize is about what req holds: its JSON members and strings.
func requestSize(req *Request) int64 {
	t := req.Task
	return int64(256 + len(t.Type) + len(t.Input.Raw()) + len(t.Spec) + len(t.ClaimedResult) + len(t.DisputeContext))
}

// put remembers req under k, in place of any request remembered there.
func (e *exams) put(k examKey, req *Request) {
	e.mu.Lock()
	defer e.mu.Unlock()
	size := requestSize(req)
	if old, ok := e.byKey[k]; ok {
		e.bytes[k.caller] += size - old.size
		e.total += size - old.size
		e.byKey[k] = &exam{req: *req, size: size}
		return
	}
	if _, ok := e.byAge[k.caller]; !ok {
		e.callers = append(e.callers, k.caller)
	}
	e.byAge[k.caller] = append(e.byAge[k.caller], k)
	e.byKey[k] = &exam{req: *req, size: size}
	e.bytes[k.caller] += size
	e.total += size
	e.n++
	for e.n > e.max || e.total > e.maxBytes && e.n > 1 {
		e.forget()
	}
}

// forget forgets the oldest exam of the caller holding the most bytes.
func (e *exams) forget() {
	most := 0
	for i, c := range e.callers {
		if e.bytes[c] > e.bytes[e.callers[most]] {
			most = i
		}
	}
	c := e.callers[most]
	keys := e.byAge[c]
	x := e.byKey[keys[0]]
	delete(e.byKey, keys[0])
	e.n--
	e.total -= x.size
	e.bytes[c] -= x.size
	if len(keys) == 1 {
		delete(e.byAge, c)
		delete(e.bytes, c)
		e.callers = append(e.callers[:most], e.callers[most+1:]...)
		return
	}
	e.byAge[c] = keys[1:]
}

// get returns the exam remembered under k, if any.
func (e *exams) get(k examKey) (*exam, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	x, ok := e.byKey[k]
	return x, ok
}

// examining marks the context of an exam's own call, which is not
// remembered for an exam of its own.
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
// the pool again, at the oracle tier, and
// reports verdict, the claim's true verdict, on that call too: the first
// time, it makes the oracle call; afterwards it reports verdict on the
// call it made, which counts as a repeat or replaces the report before,
// as on any call. Nothing happens for an id s remembers no exam under,
// nor over a router that can never serve the oracle tier (the call is
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
		ectx := traceparent.With(context.WithValue(ctx, examining{}, true), traceparent.NewTraceID())
		resp, err := s.Call(ectx, &req)
		if p := (*problem.Details)(nil); errors.As(err, &p) && p.Status == http.StatusBadRequest {
			return nil // too few sessions for the oracle tier
		}
		if err != nil {
			return fmt.Errorf("%w: %w", ErrExam, err)
		}
		x.call = resp.TraceID
	}
	_, err := s.report(ctx, x.call, against(verdict))
	if err != nil && !errors.Is(err, ErrUnknownCall) { // an exam whose votes tied teaches nothing
		return fmt.Errorf("%w: %w", ErrExam, err)
	}
	return nil
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
