package router

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"runtime/debug"
	"slices"
	"strconv"
	"time"
)

// outcome is one run: its evidence, and what the worker answered when it
// answered within the job's bounds.
type outcome struct {
	Run
	conf    Configuration   // what Run.Configuration points to
	result  *Result         // the worker's result; nil unless the run answered
	output  json.RawMessage // a delegation's output, encoded; nil unless answered
	latency time.Duration   // the run's duration by the engine's clock
	short   bool            // the run's budget is the caller's, shorter than the engine's own
}

// newOutcome returns the outcome of job on s before it runs (see
// outcome.init).
func newOutcome(s *session, job *Job, taskID string) *outcome {
	o := new(outcome)
	o.init(s, job, taskID)
	return o
}

// init makes o, a zero outcome, the outcome of job on s before it runs:
// its replica, session and task id, and the configuration the job asks
// for. It sets the fields one by one, which keeps the stack frames of a
// replica's goroutine small.
func (o *outcome) init(s *session, job *Job, taskID string) {
	o.Replica, o.SessionID, o.TaskID = job.Replica, s.ID, taskID
	o.conf.Mode, o.conf.Model, o.conf.Tier = job.Execution.Mode, job.Execution.Model, job.Tier
	o.conf.MaxSteps, o.conf.TimeoutMS = job.MaxSteps, job.TimeoutMS
	o.Configuration = &o.conf
}

// answered reports whether the run gave an answer that may vote.
func (o *outcome) answered() bool { return o.result != nil }

// health reports what the run says of its session's health: whether it
// counts at all, and if so whether it failed. An answer is a success; an
// ERROR, or a TIMEOUT while the caller was still waiting, a failure. A
// run cut short (CANCELLED), timed out by the caller's own deadline, or
// timed out under a policy.timeout_ms shorter than the engine's replica
// timeout (a bound the caller chose) says nothing of the session.
func (o *outcome) health(caller context.Context) (counts, failed bool) {
	switch {
	case o.answered():
		return true, false
	case o.Label == LabelError, o.Label == LabelTimeout && caller.Err() == nil && !o.short:
		return true, true
	}
	return false, false
}

// newTaskID returns a fresh task id: the engine's random prefix, a dash,
// and the engine's count of ids so far in base 36. Ids are unique within
// the engine, and across engines with overwhelming probability (the
// prefix holds 60 random bits).
func (e *Engine) newTaskID() string {
	var ids [1]string
	e.newTaskIDs(ids[:])
	return ids[0]
}

// newTaskIDs fills ids with fresh task ids, as newTaskID makes them, cut
// from one string.
func (e *Engine) newTaskIDs(ids []string) {
	first := e.tasks.Add(uint64(len(ids))) - uint64(len(ids)) + 1
	var buf [128]byte // room for 5 ids, the most a call needs
	b := buf[:0]
	for i := range ids {
		b = append(b, e.taskPrefix...)
		b = append(b, '-')
		b = strconv.AppendUint(b, first+uint64(i), 36)
	}
	all, start := string(b), 0
	var digits [13]byte // the base 36 digits of a uint64
	for i := range ids {
		end := start + len(e.taskPrefix) + 1 + len(strconv.AppendUint(digits[:0], first+uint64(i), 36))
		ids[i], start = all[start:end], end
	}
}

// budgets fills in the job's step and time budgets from the request's
// values, or the engine's defaults when they are zero, and returns the
// time budget.
func (e *Engine) budgets(job *Job, maxSteps int, timeoutMS int64) time.Duration {
	job.MaxSteps = maxSteps
	if job.MaxSteps == 0 {
		job.MaxSteps = e.maxSteps
	}
	timeout := time.Duration(timeoutMS) * time.Millisecond
	if timeoutMS == 0 {
		timeout = e.replicaTimeout
	}
	job.TimeoutMS = max(timeout.Milliseconds(), 1)
	return timeout
}

// run runs job on s under the job's time budget and the deadline of ctx,
// in a goroutine of its own (see invoke), then records the result in the
// session's health. It runs the one job of a version 1 or 2 call. caller
// is the caller's own context, which tells a session's timeout from the
// caller giving up. timeout is the job's time budget.
func (e *Engine) run(ctx, caller context.Context, s *session, job *Job, timeout time.Duration) *outcome {
	began := time.Now()
	rctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()

	o := newOutcome(s, job, job.TaskID)
	o.short = timeout < e.replicaTimeout
	rctx, span := e.tel.startReplica(rctx, s, job, true)
	defer e.tel.endReplica(caller, span, s, job, o, true)
	start := e.now()
	res, err, stopped := e.invoke(rctx, s, job)
	o.latency = e.now().Sub(start)
	o.settle(rctx, began, timeout, job, res, err, stopped)
	counts, failed := o.health(caller)
	e.note(s, counts, failed, o.Error)
	return o
}

// runHere runs job on s in the calling goroutine, recovering a panic,
// under the deadline of ctx, which began at began under budget, and
// records the run in o. It runs one replica of a version 3 call: the
// consensus runner gives the replica its goroutine and abandons it if it
// ignores its context. The caller records the session's health.
func (e *Engine) runHere(ctx context.Context, s *session, job *Job, began time.Time, budget time.Duration, o *outcome) {
	ctx, span := e.tel.startReplica(ctx, s, job, false)
	defer e.tel.endReplica(ctx, span, s, job, o, false)
	o.init(s, job, job.TaskID)
	start := e.now()
	res, err := e.work(ctx, s, job)
	o.latency = e.now().Sub(start)
	o.settle(ctx, began, budget, job, res, err, false)
}

// settle labels the run from the worker's answer, res and err, and from
// ctx, the run's context, which began at began under budget: TIMEOUT or
// CANCELLED when ctx ended and the worker gave up (err set, or a result
// that is no answer, as an empty one) or was abandoned (stopped), ERROR
// for an error, and otherwise what inspect finds. A TIMEOUT names the
// time from began to ctx's deadline, the caller's when it came first,
// else budget (the deadline was set a moment after began). A result
// returned beside an error gives the run its usage alone.
func (o *outcome) settle(ctx context.Context, began time.Time, budget time.Duration, job *Job, res *Result, err error, stopped bool) {
	o.LatencyMS = o.latency.Milliseconds()
	if err != nil && res != nil && usageProblem(res.Usage) == "" {
		o.Usage = res.Usage // what the failed run spent
	}
	cerr := ctx.Err()
	switch {
	case cerr != nil && (stopped || err != nil):
	case err != nil:
		o.Label, o.Error = LabelError, err.Error()
		return
	default:
		if o.inspect(job, res); cerr == nil || o.answered() {
			return
		}
		o.Confidence, o.Reasons, o.Output = 0, nil, nil // cut short: no answer
	}
	if errors.Is(cerr, context.DeadlineExceeded) {
		dl, _ := ctx.Deadline()
		o.Label, o.Error = LabelTimeout, fmt.Sprintf("no answer within %v", min(dl.Sub(began), budget).Round(time.Millisecond))
	} else {
		o.Label, o.Error = LabelCancelled, "cancelled: "+context.Cause(ctx).Error()
	}
}

// note records a run of s in the session's health, as outcome.health
// reports it, and logs a session sent to cool down with the run's error.
func (e *Engine) note(s *session, counts, failed bool, reason string) {
	if counts && s.record(failed, e.now(), e.threshold, e.cooldown) {
		e.log.Warn("router: session cooling down after repeated failures",
			"session_id", s.ID, "failures", e.threshold, "cooldown", e.cooldown, "last_error", reason)
	}
}

// work calls the session's worker, turning a panic into an error. The
// panic's value, which can hold internals, goes to the engine's log with
// the stack; the error, which the caller gets as run evidence, says only
// that the worker panicked.
func (e *Engine) work(ctx context.Context, s *session, job *Job) (res *Result, err error) {
	defer func() {
		if v := recover(); v != nil {
			e.log.Error("router: worker panicked", "session_id", s.ID, "task_id", job.TaskID,
				"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			res, err = nil, errors.New("the worker panicked")
		}
	}()
	return s.Worker.Work(ctx, job)
}

// invoke calls the session's worker in a goroutine of its own, recovering
// a panic, and waits for it to return or for ctx to end. Once ctx ends it
// waits up to the stop grace for the worker to return, then abandons it;
// stopped is true in both cases, and the result, if any, is discarded.
func (e *Engine) invoke(ctx context.Context, s *session, job *Job) (res *Result, err error, stopped bool) {
	type answer struct {
		res *Result
		err error
	}
	done := make(chan answer, 1) // buffered: an abandoned worker never blocks
	go func() {
		var a answer
		a.res, a.err = e.work(ctx, s, job)
		done <- a
	}()

	select {
	case a := <-done:
		return a.res, a.err, false
	case <-ctx.Done():
	}
	grace := time.NewTimer(e.stopGrace)
	defer grace.Stop()
	select {
	case <-done:
	case <-grace.C:
		e.log.Warn("router: worker ignored its cancelled context; abandoning it",
			"session_id", s.ID, "task_id", job.TaskID, "grace", e.stopGrace)
	}
	return nil, nil, true
}

// validVerdicts lists the verdicts each kind of job may answer.
var validVerdicts = map[Kind][]Verdict{
	KindValidate:  {VerdictValid, VerdictInvalid, VerdictRetry, VerdictNeedsSpec},
	KindFactcheck: {VerdictTrue, VerdictFalse},
}

// inspect checks the worker's result against the job and fills in the
// run: its label and evidence when the result is within bounds, ERROR and
// the reason when it is not. Evidence that cannot be encoded as JSON is
// left out of the run.
func (o *outcome) inspect(job *Job, res *Result) {
	if res == nil {
		o.Label, o.Error = LabelError, "worker returned neither a result nor an error"
		return
	}
	o.Reasons, o.Tools = res.Reasons, res.Tools
	if res.Model != "" {
		o.Configuration.Model = res.Model
	}
	problem := resultProblem(job, res)
	if !finite(res.Confidence) || res.Confidence < 0 || res.Confidence > 1 {
		problem = fmt.Sprintf("confidence %v is outside [0, 1]", res.Confidence)
	} else {
		o.Confidence = res.Confidence
	}
	if p := usageProblem(res.Usage); p == "" {
		o.Usage = res.Usage
	} else if problem == "" {
		problem = p
	}
	if bad := badStep(res.Steps); bad < 0 {
		o.Steps = res.Steps
	} else if problem == "" {
		problem = fmt.Sprintf("steps[%d].output is not valid JSON", bad)
	}
	var output json.RawMessage
	if job.Kind == KindDelegate {
		var err error
		output, err = json.Marshal(res.Output)
		switch {
		case err != nil:
			output = nil
			if problem == "" {
				problem = "output cannot be encoded as JSON: " + err.Error()
			}
		case string(output) == "null":
			output = nil
			if problem == "" {
				problem = "worker returned no output"
			}
		default:
			if p := ijsonProblem(output); p != "" {
				output = nil
				if problem == "" {
					problem = "output is not I-JSON (RFC 7493): " + p
				}
			}
		}
		o.Output = output
	}
	if problem != "" {
		o.Label, o.Error = LabelError, problem
		return
	}
	o.Label = LabelOK
	if job.Kind != KindDelegate {
		o.Label = Label(res.Verdict)
	}
	o.result, o.output = res, output
}

// resultProblem checks the verdict and the step budget.
func resultProblem(job *Job, res *Result) string {
	if want, ok := validVerdicts[job.Kind]; ok {
		switch {
		case res.Verdict == "":
			return "worker returned no verdict"
		case !slices.Contains(want, res.Verdict):
			return fmt.Sprintf("verdict %q is not one of %v", res.Verdict, want)
		}
	}
	if job.MaxSteps > 0 && len(res.Steps) > job.MaxSteps {
		return fmt.Sprintf("worker reported %d steps; the budget is %d (execution.max_steps)", len(res.Steps), job.MaxSteps)
	}
	return ""
}

// usageProblem says what is wrong with a result's usage, or returns "":
// a count or a cost below zero, which would take from what the other
// runs of the call spent, or a cost that is not a finite number.
func usageProblem(u *Usage) string {
	switch {
	case u == nil:
		return ""
	case u.PromptTokens < 0:
		return fmt.Sprintf("usage prompt_tokens %d is negative", u.PromptTokens)
	case u.CompletionTokens < 0:
		return fmt.Sprintf("usage completion_tokens %d is negative", u.CompletionTokens)
	case !finite(u.Cost):
		return fmt.Sprintf("usage cost %v is not a finite number", u.Cost)
	case u.Cost < 0:
		return fmt.Sprintf("usage cost %v is negative", u.Cost)
	}
	return ""
}

// badStep returns the index of the first step whose output is not valid
// JSON, or -1.
func badStep(steps []Step) int {
	for i, s := range steps {
		if len(s.Output) > 0 && !json.Valid(s.Output) {
			return i
		}
	}
	return -1
}

func finite(f float64) bool { return !math.IsNaN(f) && !math.IsInf(f, 0) }
