package router

import (
	"context"
	"encoding/json"
)

// Worker runs one job: one run on one session. The host supplies workers;
// the [Engine] calls them.
//
// Work may be called concurrently, for different jobs, and must not modify
// the job or keep it after returning. It must return promptly once ctx is
// done: ctx carries the replica's deadline and is cancelled when the
// outcome of a version 3 call is decided without this replica. A non-nil
// error, a nil result, or a result that breaks the job's bounds makes the
// replica an ERROR vote (TIMEOUT when ctx's deadline had passed). A panic
// is recovered by the engine and recorded as ERROR, as net/http confines a
// handler's panic to its request.
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
	// EvaluationMode is a version 1 evaluation mode, or empty.
	EvaluationMode string `json:"evaluation_mode,omitempty"`

	// Domain is a version 1 task_domain hint.
	Domain string `json:"domain,omitempty"`
	// TaskType is a version 1 task_type hint.
	TaskType string `json:"task_type,omitempty"`
	// WebURL is a version 1 web_url.
	WebURL string `json:"web_url,omitempty"`
	// Context is the caller's context.
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
	// Usage is what the run spent, if the worker knows.
	Usage *Usage `json:"usage,omitempty"`
}
