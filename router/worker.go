package router

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/vouchkit/vouch/problem"
)

// Worker runs one job: one run on one session. The host supplies workers;
// the [Engine] calls them.
//
// Work may be called concurrently, for different jobs, and must not modify
// the job or keep it after returning. It must return promptly once ctx is
// done: ctx carries the replica's deadline and is cancelled when the
// outcome of a version 3 call is decided without this replica. A non-nil
// error, a nil result, or a result that breaks the job's bounds makes the
// replica an ERROR vote (TIMEOUT when ctx's deadline had passed). A
// result returned beside an error is read only for its Usage, what the
// failed run spent (a model's reply that held no answer still cost its
// tokens). A panic is recovered by the engine and recorded as ERROR, as
// net/http confines a handler's panic to its request.
type Worker interface {
	Work(ctx context.Context, job *Job) (*Result, error)
}

// WorkerFunc adapts an ordinary function to the [Worker] interface.
type WorkerFunc func(ctx context.Context, job *Job) (*Result, error)

// Work calls f(ctx, job).
func (f WorkerFunc) Work(ctx context.Context, job *Job) (*Result, error) { return f(ctx, job) }

// Kind is the kind of work a job asks for.
type Kind string

// The kinds of job.
const (
	KindDelegate  Kind = "delegate"
	KindValidate  Kind = "validate"
	KindFactcheck Kind = "factcheck"
)

// Job is one run on one session, the same shape for every version: version
// 1 fields are mapped onto it (task_request_input becomes Objective for a
// delegation and Claim.Description for a validation, task_result_output
// becomes Claim.Output as a JSON string, acceptance_criteria become Rules).
// Its JSON form is the job body of [HTTPWorker].
//
// A validation also carries the task its claim answers, in TaskInput,
// TaskSpec and DisputeContext. A validate request has no members of its
// own for them: the caller puts them in its context object under the
// names "task_input", "task_spec" and "dispute_context" (the trust
// service does), and the engine moves each one that decodes into its
// typed member, so a worker reads job.TaskInput rather than a map key.
// A task_input that is neither an object, a string nor the array form
// is refused with the request (400, naming context.task_input).
type Job struct {
	// Kind is delegate, validate or factcheck.
	Kind Kind `json:"kind"`
	// Version is the API version of the call: 1, 2 or 3.
	Version int `json:"version"`
	// SessionID is the session the job runs on.
	SessionID SessionID `json:"session_id"`
	// TaskID identifies this run.
	TaskID string `json:"task_id"`
	// Replica is the replica's index in a version 3 call, from 0.
	Replica int `json:"replica"`
	// Tier is the tier requested, or empty.
	Tier Tier `json:"tier,omitempty"`
	// MaxSteps is the step budget; 0 means none. A result reporting more
	// steps is rejected.
	MaxSteps int `json:"max_steps,omitempty"`
	// TimeoutMS is the replica's time budget in milliseconds; the context's
	// deadline enforces it.
	TimeoutMS int64 `json:"timeout_ms,omitempty"`

	// Objective is what a delegation is to achieve.
	Objective string `json:"objective,omitempty"`
	// Input is a delegation's input.
	Input Input `json:"input,omitzero"`
	// Execution is a delegation's execution block.
	Execution Execution `json:"execution,omitzero"`
	// Tools are a delegation's tool definitions, as the caller gave them.
	Tools json.RawMessage `json:"tools,omitempty"`
	// Workflow is a delegation's workflow, as the caller gave it.
	Workflow json.RawMessage `json:"workflow,omitempty"`

	// Claim is what a validation judges.
	Claim *Claim `json:"claim,omitempty"`
	// Statement is what a fact check judges.
	Statement string `json:"statement,omitempty"`
	// FactcheckMode is the fact check's mode.
	FactcheckMode FactcheckMode `json:"factcheck_mode,omitempty"`
	// Rules are the validation's rules or acceptance criteria.
	Rules []string `json:"rules,omitempty"`

	// TaskInput is the input of the task whose result a validation judges:
	// what the claimed result was made from. Absent when the caller gave
	// none.
	TaskInput Input `json:"task_input,omitzero"`
	// TaskSpec states what a correct result is, as the caller gave it: a
	// JSON string, or an object with a schema and constraints. Absent
	// when the caller gave none; a judge that cannot decide without it
	// may answer NEEDS_SPEC.
	TaskSpec json.RawMessage `json:"task_spec,omitempty"`
	// DisputeContext describes an arbitrated dispute (who claims what),
	// as the caller gave it. Present only when the validation arbitrates.
	DisputeContext json.RawMessage `json:"dispute_context,omitempty"`
	// EvaluationMode is a version 1 evaluation mode, or empty.
	EvaluationMode string `json:"evaluation_mode,omitempty"`

	// Domain is a version 1 task_domain hint.
	Domain string `json:"domain,omitempty"`
	// TaskType is a version 1 task_type hint.
	TaskType string `json:"task_type,omitempty"`
	// WebURL is a version 1 web_url.
	WebURL string `json:"web_url,omitempty"`
	// Context is the caller's context, without the members the engine
	// lifted into TaskInput, TaskSpec and DisputeContext.
	Context map[string]any `json:"context,omitempty"`
	// Metadata is the caller's metadata.
	Metadata map[string]any `json:"metadata,omitempty"`
}

// Result is what a worker reports for a job.
type Result struct {
	// Verdict is the answer of a validation (VALID, INVALID, RETRY,
	// NEEDS_SPEC) or a fact check (TRUE, FALSE). Delegations leave it empty.
	Verdict Verdict `json:"verdict,omitempty"`
	// Confidence is the worker's own confidence, between 0 and 1.
	Confidence float64 `json:"confidence,omitempty"`
	// Reasons explain the verdict.
	Reasons []string `json:"reasons,omitempty"`
	// Output is a delegation's output: any value encoding/json can encode.
	Output any `json:"output,omitempty"`
	// Steps are the steps taken.
	Steps []Step `json:"steps,omitempty"`
	// Tools are the tools used.
	Tools []string `json:"tools,omitempty"`
	// Model is the model used, if any.
	Model string `json:"model,omitempty"`
	// Usage is what the run spent, if the worker knows: counts and a
	// cost of zero or more, or the run is an ERROR.
	Usage *Usage `json:"usage,omitempty"`
}

// The context members of a validate request that the engine lifts into a
// [Job]'s typed members.
const (
	contextTaskInput      = "task_input"
	contextTaskSpec       = "task_spec"
	contextDisputeContext = "dispute_context"
)

// liftTaskContext moves the task_input, task_spec and dispute_context
// members of the job's context into their typed members. The context map
// is copied before any member is removed: it belongs to the request.
func (j *Job) liftTaskContext() {
	if len(j.Context) == 0 {
		return
	}
	lifted := make(map[string]bool, 3)
	if v, ok := j.Context[contextTaskInput]; ok {
		in, ok := v.(Input)
		if !ok {
			raw, _ := rawJSON(v)
			ok = raw != nil && in.UnmarshalJSON(raw) == nil
		}
		if ok && !in.IsZero() {
			j.TaskInput, lifted[contextTaskInput] = in, true
		}
	}
	if raw, ok := rawJSON(j.Context[contextTaskSpec]); ok {
		j.TaskSpec, lifted[contextTaskSpec] = raw, true
	}
	if raw, ok := rawJSON(j.Context[contextDisputeContext]); ok {
		j.DisputeContext, lifted[contextDisputeContext] = raw, true
	}
	if len(lifted) == 0 {
		return
	}
	rest := make(map[string]any, len(j.Context))
	for k, v := range j.Context {
		if !lifted[k] {
			rest[k] = v
		}
	}
	if len(rest) == 0 {
		rest = nil
	}
	j.Context = rest
}

// taskInput refuses a context task_input that is no input (an object, a
// string or the array form), which the engine could not hand a worker as
// its job's TaskInput. JSON null is absent.
func (t *ValidateTask) taskInput() []problem.FieldError {
	v := t.Context[contextTaskInput]
	if _, ok := v.(Input); ok || v == nil {
		return nil
	}
	raw, ok := rawJSON(v)
	var in Input
	err := in.UnmarshalJSON(raw)
	if ok && err == nil {
		return nil
	}
	got := "a value that is not JSON"
	var typ *json.UnmarshalTypeError
	if ok && errors.As(err, &typ) {
		got = typ.Value
	}
	return []problem.FieldError{{
		Field: "context." + contextTaskInput, Rule: "type",
		Message: `is the input the claimed result was made from: expected an object, a string or {"kind":"array","items":[...]}, got ` + got,
	}}
}

// rawJSON returns the JSON of a context value: itself when it is already
// JSON, else its encoding. A nil or unencodable value yields false.
func rawJSON(v any) (json.RawMessage, bool) {
	if v == nil {
		return nil, false
	}
	if raw, ok := v.(json.RawMessage); ok {
		return raw, json.Valid(raw) && string(raw) != "null"
	}
	raw, err := json.Marshal(v)
	if err != nil || string(raw) == "null" {
		return nil, false
	}
	return raw, true
}
