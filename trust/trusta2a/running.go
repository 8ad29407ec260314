package trusta2a

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2asrv"

	"github.com/vouchkit/vouch/internal/fairstore"
	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/trust"
)

// DefaultBackgroundTimeout bounds a call made after answering its
// message (1.0's returnImmediately, 0.3's blocking false) when
// Config.BackgroundTimeout is 0.
const DefaultBackgroundTimeout = 5 * time.Minute

// The causes that end a running call before it answers: the client's
// CancelTask (or tasks/cancel), and the handler's Close. Each is a
// context.Canceled, for the Caller that returns its context's cause.
var (
	errCanceled = fmt.Errorf("the task was canceled: %w", context.Canceled)
	errClosed   = fmt.Errorf("the A2A handler was closed: %w", context.Canceled)
)

// run is a task whose call runs on after its message was answered.
type run struct {
	raw    []byte // the working task, as JSON
	size   int64
	cancel context.CancelCauseFunc
	done   chan struct{} // closed once the call's task is kept
}

// runningTasks are the tasks whose calls run, by caller and id.
type runningTasks struct {
	tasks   map[taskKey]*run
	byOwner map[string]int // how many each owner has running
	bytes   int64
	closed  bool
	calls   sync.WaitGroup // one for each call, until its task is kept
}

// start records task, whose call is about to run for the caller of ctx,
// as running: read and listed as the kept tasks are, and never
// forgotten while it runs. cancel ends the call. Running tasks count
// against the store's bounds, each apart from the kept ones: an owner
// has at most perCaller running, the store at most max, of at most
// maxBytes (beyond one task). A task beyond them, or started after
// stop, is an error and is not recorded.
func (s *taskStore) start(ctx context.Context, task *a2a.Task, cancel context.CancelCauseFunc) (*run, error) {
	raw, err := json.Marshal(task)
	if err != nil {
		return nil, err
	}
	k := taskKey{trust.CallerFrom(ctx), task.ID}
	owner := fairstore.OwnerOf(k.caller, fairstore.IPv6OwnerBits)
	r := &run{raw: raw, size: int64(len(raw)+len(k.caller)+len(k.id)) + taskOverhead, cancel: cancel, done: make(chan struct{})}
	s.mu.Lock()
	defer s.mu.Unlock()
	rs := &s.running
	switch {
	case rs.closed:
		return nil, errClosed
	case rs.byOwner[owner] >= s.perCaller:
		return nil, fmt.Errorf("this caller has %d calls running, the most it may", rs.byOwner[owner])
	case len(rs.tasks) >= s.max || len(rs.tasks) > 0 && rs.bytes+r.size > s.maxBytes:
		return nil, fmt.Errorf("the agent runs %d calls, the most it may", len(rs.tasks))
	}
	rs.tasks[k] = r
	rs.byOwner[owner]++
	rs.bytes += r.size
	rs.calls.Add(1)
	return r, nil
}

// finish keeps task, the end of a running task of the caller of ctx, in
// place of the running one.
func (s *taskStore) finish(ctx context.Context, task *a2a.Task) error {
	raw, err := json.Marshal(task)
	k := taskKey{trust.CallerFrom(ctx), task.ID}
	owner := fairstore.OwnerOf(k.caller, fairstore.IPv6OwnerBits)
	s.mu.Lock()
	defer s.mu.Unlock()
	rs := &s.running
	r := rs.tasks[k]
	delete(rs.tasks, k)
	if rs.byOwner[owner]--; rs.byOwner[owner] == 0 {
		delete(rs.byOwner, owner)
	}
	rs.bytes -= r.size
	if err == nil {
		s.keep(k, raw)
	}
	close(r.done)
	return err
}

// isRunning reports whether the call of task id of the caller of ctx is
// running.
func (s *taskStore) isRunning(ctx context.Context, id a2a.TaskID) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.running.tasks[taskKey{trust.CallerFrom(ctx), id}]
	return ok
}

// cancelRun cancels the call of task id of the caller of ctx, if it is
// running, and returns the task once it has ended; ok is false when the
// task is not running. When ctx ends before the call has, err is its
// cause: the call is cancelled all the same, and ends its task canceled.
func (s *taskStore) cancelRun(ctx context.Context, id a2a.TaskID) (task *a2a.Task, ok bool, err error) {
	s.mu.Lock()
	r := s.running.tasks[taskKey{trust.CallerFrom(ctx), id}]
	s.mu.Unlock()
	if r == nil {
		return nil, false, nil
	}
	r.cancel(errCanceled)
	select {
	case <-r.done:
	case <-ctx.Done():
		return nil, true, context.Cause(ctx)
	}
	task, err = s.Get(ctx, id)
	return task, true, err
}

// stop cancels the running calls, refuses to start more, and returns
// once their tasks are kept.
func (s *taskStore) stop() {
	s.mu.Lock()
	s.running.closed = true
	for _, r := range s.running.tasks {
		r.cancel(errClosed)
	}
	s.mu.Unlock()
	s.running.calls.Wait()
}

// sendInBackground answers a SendMessage asking for call c, the message
// of reqCtx, with its task working, and makes the call after answering
// (see startInBackground).
func (s *v1Server) sendInBackground(ctx context.Context, reqCtx *a2asrv.RequestContext, c *call, historyLength *int32) (any, *rpcError) {
	task, rerr := s.startInBackground(ctx, reqCtx, c, "send without returnImmediately")
	if rerr != nil {
		return nil, rerr
	}
	return map[string]v1Task{"task": v1TaskOf(task, historyLength, true)}, nil
}

// sendNonBlocking03 answers a version 0.3 message/send with blocking
// false, msg its message (of no task), as sendInBackground answers a
// SendMessage with returnImmediately: its task, working, is the answer,
// which the handler writes as the SDK writes a task, and the call is made
// after answering (see startInBackground). For a message the agent
// cannot read, ok is false and nothing is done: the SDK answers it as it
// answers a blocking message/send.
func (s *v1Server) sendNonBlocking03(ctx context.Context, msg *a2a.Message) (task *a2a.Task, ok bool, rerr *rpcError) {
	// The request context the SDK makes for a message of no task.
	reqCtx := &a2asrv.RequestContext{Message: msg, TaskID: a2a.NewTaskID(), ContextID: msg.ContextID, Metadata: msg.Metadata}
	if reqCtx.ContextID == "" {
		reqCtx.ContextID = a2a.NewContextID()
	}
	c, err := s.exec.read(ctx, reqCtx)
	if err != nil {
		return nil, false, nil
	}
	task, rerr = s.startInBackground(ctx, reqCtx, c, "send with blocking true")
	return task, true, rerr
}

// startInBackground starts call c, the message of reqCtx, to be made
// after answering, and returns the task to answer, working: the call is
// made on a context detached from the request's, so that the client
// going away does not end it, and bounded by s.timeout and by Close. The
// call ends its task as a blocking message would, completed or failed; a
// call the trust service refuses as the caller's mistake, for which a
// blocking message is answered invalid params, ends it failed; a
// CancelTask (or tasks/cancel) ends it canceled. A caller with as many
// calls running as it may keep tasks (Config.MaxTasksPerCaller) is
// answered a task failed 429 rate_limited, its call not made, the
// problem's detail suggesting instead (what else the caller may send).
func (s *v1Server) startInBackground(ctx context.Context, reqCtx *a2asrv.RequestContext, c *call, instead string) (*a2a.Task, *rpcError) {
	now := time.Now()
	task := &a2a.Task{ID: reqCtx.TaskID, ContextID: reqCtx.ContextID, History: []*a2a.Message{reqCtx.Message},
		Status: a2a.TaskStatus{State: a2a.TaskStateWorking, Timestamp: &now}}
	bg := context.WithoutCancel(ctx) // the caller, the trace, the output modes
	callCtx, cancel := context.WithCancelCause(bg)
	if _, err := s.tasks.start(ctx, task, cancel); err != nil {
		cancel(nil)
		p := problem.New(http.StatusTooManyRequests, problem.CodeRateLimited, err.Error()+"; wait for one to end, or "+instead)
		if errors.Is(err, errClosed) {
			p = problem.New(http.StatusServiceUnavailable, problem.CodeUnavailable, "the agent is shutting down")
		}
		task = failedTask(reqCtx, c.skill, p)
		if err := s.tasks.Save(ctx, task); err != nil {
			s.exec.log.ErrorContext(ctx, "trusta2a: saving a task failed", "error", err)
			return nil, &rpcError{Code: -32603, Message: "Internal error"}
		}
		return task, nil
	}
	go func() {
		defer s.tasks.running.calls.Done()
		defer cancel(nil)
		callCtx, stop := context.WithTimeout(callCtx, s.timeout)
		defer stop()
		task, _ := s.exec.complete(callCtx, reqCtx, c)
		if errors.Is(context.Cause(callCtx), errCanceled) {
			task = finished(reqCtx, a2a.TaskStateCanceled, c.skill+" canceled: the client canceled the task", nil)
		}
		if err := s.tasks.finish(bg, task); err != nil {
			s.exec.log.ErrorContext(bg, "trusta2a: saving a task failed", "error", err)
		}
	}()
	return task, nil
}
