package trusta2a

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"runtime/debug"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"
	"github.com/a2aproject/a2a-go/a2asrv/eventqueue"

	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/internal/summary"
)

// executor answers each message with the call it asks for: it implements
// a2asrv.AgentExecutor.
type executor struct {
	caller trust.Caller
	router router.Service // nil: no factcheck
	log    *slog.Logger   // never nil
	tasks  *taskStore     // whose running calls Cancel ends
}

var _ a2asrv.AgentExecutor = (*executor)(nil)

// Execute writes the answer of the message as one event: the task of
// answer.
//
// The SDK runs Execute on a context detached from the request's, so that
// the call would run on, in goroutines of the SDK's, after the client
// went away (or forever, for a Caller that waits for its context). The
// call is made on a context cancelled with the request's (see
// withRequest); the task is still written on the SDK's, so that a call
// the client gave up on ends as a failed task.
func (e *executor) Execute(ctx context.Context, reqCtx *a2asrv.RequestContext, q eventqueue.Queue) error {
	if st := reqCtx.StoredTask; st != nil { // a task not finished, whose call answers it
		return fmt.Errorf("task %s is %s; send a new message without taskId: %w", st.ID, st.Status.State, a2a.ErrUnsupportedOperation)
	}
	callCtx, stop := attached(ctx)
	defer stop()
	task, err := e.answer(callCtx, reqCtx)
	if err != nil {
		return err
	}
	return q.Write(ctx, task)
}

// requestKey is the key of the request's context in the context the
// handler gives the SDK.
type requestKey struct{}

// withRequest returns ctx, the request's context, carrying itself, so
// that Execute finds it through the SDK's detached context (which keeps
// the values and drops the cancellation).
func withRequest(ctx context.Context) context.Context {
	return context.WithValue(ctx, requestKey{}, ctx)
}

// attached returns ctx, cancelled with the cause of the request's context
// that withRequest put in it once that ends, and the function that
// releases it. Without a request's context it returns ctx as it is.
func attached(ctx context.Context) (context.Context, func()) {
	req, ok := ctx.Value(requestKey{}).(context.Context)
	if !ok {
		return ctx, func() {}
	}
	ctx, cancel := context.WithCancelCause(ctx)
	stop := context.AfterFunc(req, func() { cancel(context.Cause(req)) })
	return ctx, func() {
		stop()
		cancel(nil)
	}
}

// answer reads the message, makes its call and returns the task that
// answers it: completed, with the answer as its artifact, or failed, its
// status message saying why (see failure). A message it cannot read is
// an error wrapping a2a.ErrInvalidParams (and an *InputError when the
// message is at fault), and no task is made; so is a call that the
// trust service refuses as the caller's mistake (a problem of status 4xx
// other than 429).
func (e *executor) answer(ctx context.Context, reqCtx *a2asrv.RequestContext) (*a2a.Task, error) {
	c, err := e.read(ctx, reqCtx)
	if err != nil {
		return nil, err
	}
	task, refused := e.complete(ctx, reqCtx, c)
	if refused != nil {
		return nil, fmt.Errorf("%w: %s: %s", a2a.ErrInvalidParams, c.skill, problemText(refused))
	}
	return task, nil
}

// read returns the call the message of reqCtx asks for, or an error
// wrapping a2a.ErrInvalidParams.
func (e *executor) read(ctx context.Context, reqCtx *a2asrv.RequestContext) (*call, error) {
	c, err := fromMessage(reqCtx.Message, sentData(ctx, reqCtx.Message))
	if err == nil && c.skill == SkillFactcheck && e.router == nil {
		err = &InputError{Argument: "skill", Message: "factcheck is not served by this agent", Allowed: []string{SkillValidateClaim, SkillDelegateTask, SkillArbitrate}}
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %w", a2a.ErrInvalidParams, err)
	}
	return c, nil
}

// complete makes call c and returns the task that answers it, completed
// or failed. When the trust service refuses the call as the caller's
// mistake (a problem of status 4xx other than 429), the task is failed
// and refused is that problem.
func (e *executor) complete(ctx context.Context, reqCtx *a2asrv.RequestContext, c *call) (task *a2a.Task, refused *problem.Details) {
	answer, summary, err := e.run(ctx, c)
	var p *problem.Details
	if errors.As(err, &p) && p.Status >= 400 && p.Status < 500 && p.Status != http.StatusTooManyRequests {
		refused = p
	}
	if err != nil {
		return failedTask(reqCtx, c.skill, e.failure(ctx, c.skill, err)), refused
	}
	art := &a2a.Artifact{ID: a2a.NewArtifactID(), Name: c.skill, Description: "the answer of " + c.skill + ", as the data part, and its summary",
		Parts: acceptedParts(ctx, a2a.ContentParts{a2a.DataPart{Data: answer}, a2a.TextPart{Text: summary}})}
	return finished(reqCtx, a2a.TaskStateCompleted, summary, art), nil
}

// failedTask returns the task of reqCtx failed by p, its status message
// saying why, with p's status and code in the message's metadata.
func failedTask(reqCtx *a2asrv.RequestContext, skill string, p *problem.Details) *a2a.Task {
	task := finished(reqCtx, a2a.TaskStateFailed, skill+" failed: "+problemText(p), nil)
	task.Status.Message.Metadata = map[string]any{"status": p.Status, "code": string(p.Code)}
	return task
}

// finished returns the task of reqCtx in state, its status message text,
// with the artifact art if not nil. The task is written whole, as one
// event: the SDK then stores and answers it as it is, where the events
// that update a task pass through a copy that turns an empty array in a
// data part into null.
func finished(reqCtx *a2asrv.RequestContext, state a2a.TaskState, text string, art *a2a.Artifact) *a2a.Task {
	task := &a2a.Task{ID: reqCtx.TaskID, ContextID: reqCtx.ContextID, History: []*a2a.Message{reqCtx.Message}}
	if st := reqCtx.StoredTask; st != nil {
		task.History, task.Artifacts, task.Metadata = st.History, st.Artifacts, st.Metadata
	}
	if art != nil {
		task.Artifacts = append(task.Artifacts, art)
	}
	now := time.Now()
	task.Status = a2a.TaskStatus{State: state, Timestamp: &now,
		Message: a2a.NewMessageForTask(a2a.MessageRoleAgent, reqCtx, a2a.TextPart{Text: text})}
	return task
}

// Cancel ends a task canceled: a task whose call runs after its message
// was answered (1.0's returnImmediately, 0.3's blocking false) once the
// call has stopped, unless it finished first.
func (e *executor) Cancel(ctx context.Context, reqCtx *a2asrv.RequestContext, q eventqueue.Queue) error {
	if task, ok, err := e.tasks.cancelRun(ctx, reqCtx.TaskID); ok {
		switch {
		case err != nil:
			return err
		case task.Status.State != a2a.TaskStateCanceled:
			return fmt.Errorf("task %s is %s: %w", task.ID, task.Status.State, a2a.ErrTaskNotCancelable)
		}
		return q.Write(ctx, task)
	}
	ev := a2a.NewStatusUpdateEvent(reqCtx, a2a.TaskStateCanceled, nil)
	ev.Final = true
	return q.Write(ctx, ev)
}

// run makes call c and returns its answer as a data part's data, and a
// one-line summary. A panic of the call (of a host's trust.Caller, say)
// is an error, its value and stack logged: the task fails "internal
// error", as the HTTP doors answer 500, in each version of the protocol.
func (e *executor) run(ctx context.Context, c *call) (data map[string]any, line string, err error) {
	defer func() {
		if v := recover(); v != nil {
			e.log.ErrorContext(ctx, "trusta2a: call panicked", "skill", c.skill, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			data, line, err = nil, "", errors.New("the call panicked")
		}
	}()
	if c.factcheck != nil {
		resp, err := e.router.Factcheck(ctx, c.factcheck)
		if err == nil && resp == nil {
			err = errors.New("the router returned no answer")
		}
		if err != nil {
			return nil, "", err
		}
		data, err := dataOf(resp)
		return data, summary.Factcheck(resp), err
	}
	resp, err := e.caller.Call(ctx, c.trust)
	if err == nil && resp == nil {
		err = errors.New("the trust service returned no answer")
	}
	if err != nil {
		return nil, "", err
	}
	data, err = dataOf(resp)
	if err != nil {
		return nil, "", err
	}
	if c.trust.Receipt.Mode == receipt.DeliveryInline && len(resp.Receipt) > 0 {
		// The receipt verifies only as the bytes it was issued as; the
		// object in the data part may be written again in another
		// spelling on the way, a string is not.
		data["receipt_json"] = string(resp.Receipt)
	}
	return data, summary.Trust(resp), nil
}

// dataOf returns v as a JSON object, each number as written: the
// answer's result is the claimed result or the runs' output, whose
// numbers a float64 may not hold.
func dataOf(v any) (map[string]any, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return objectOf(raw)
}

// problemText is a problem's detail and failing fields.
func problemText(p *problem.Details) string {
	s := p.Detail
	if s == "" {
		s = p.Title
	}
	for _, fe := range p.Errors {
		s += "; " + fe.Field + ": " + fe.Message
	}
	return fmt.Sprintf("%s (%d %s)", s, p.Status, p.Code)
}

// failure is the problem a failed call's task states, as the HTTP routes
// answer it: a problem (the trust service's or the router's answer to
// the caller) as it is, a deadline as 504 timeout, a cancelled call as
// 503 unavailable. Any other error may carry what a caller must not see
// (a database's host and user, a remote service's address): it is
// logged, and the task says only "internal error" (500 internal).
func (e *executor) failure(ctx context.Context, skill string, err error) *problem.Details {
	var p *problem.Details
	switch {
	case errors.As(err, &p) && p.Status >= 400 && p.Status <= 599:
		return p
	case errors.Is(err, context.DeadlineExceeded):
		return problem.New(http.StatusGatewayTimeout, problem.CodeTimeout, "the call did not finish in time")
	case errors.Is(err, context.Canceled):
		return problem.New(http.StatusServiceUnavailable, problem.CodeUnavailable, "the call was cancelled")
	}
	e.log.ErrorContext(ctx, "trusta2a: call failed", "skill", skill, "error", err)
	return problem.New(http.StatusInternalServerError, problem.CodeInternal, "internal error")
}
