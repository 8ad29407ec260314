package router

import (
	"encoding/json"

	"github.com/vouchkit/vouch/consensus"
)

// DelegateTask is the part of a delegate request shared by versions 2 and
// 3: what to do and under which bounds.
type DelegateTask struct {
	// Objective states in plain language what is wanted.
	Objective string `json:"objective" validate:"required,text"`
	// Input is the structured input: an object, a string or the array form.
	Input Input `json:"input"`
	// Execution bounds how the work is done.
	Execution Execution `json:"execution"`
	// Policy sets the tier and the time bound.
	Policy Policy `json:"policy"`
	// Tools is an optional top-level list of tool definitions, passed to the
	// worker as given.
	Tools json.RawMessage `json:"tools,omitempty"`
	// Workflow is an optional workflow description, passed to the worker as
	// given.
	Workflow json.RawMessage `json:"workflow,omitempty"`
	// Metadata is optional caller metadata, passed to the worker as given.
	Metadata map[string]any `json:"metadata,omitempty"`
}

// DelegateV2Request is the body of POST /api/v2/delegate: a
// workflow run on one session.
type DelegateV2Request struct {
	// SessionID is the session used.
	SessionID SessionID `json:"session_id" validate:"required,gt=0"`
	DelegateTask
}

// Execution is execution of a delegate v2 request.
type Execution struct {
	// Mode is "tools", "simple" or "chain"; empty leaves it to the worker.
	Mode ExecutionMode `json:"mode,omitempty" validate:"omitempty,oneof=tools simple chain"`
	// Model is a model name or "auto"; empty means "auto".
	Model string `json:"model,omitempty"`
	// Tools names the tools the worker may use; each name holds text.
	Tools []string `json:"tools,omitempty" validate:"omitempty,dive,required,text"`
	// MaxSteps bounds the steps a worker may take; 0 means the server's
	// default. A worker that reports more steps fails the replica.
	MaxSteps int `json:"max_steps,omitempty" validate:"omitempty,gt=0,lte=10000"`
}

// Policy is policy of a delegate v2 request.
type Policy struct {
	// Tier is fast, safe, oracle or balanced; empty means any tier.
	Tier Tier `json:"tier,omitempty" validate:"omitempty,tier"`
	// TimeoutMS bounds each run in milliseconds; 0 means the server's
	// default.
	TimeoutMS int64 `json:"timeout_ms,omitempty" validate:"omitempty,gt=0,lte=3600000"`
	// Redundancy is 1, 3 or 5 when set. Version 2 delegate runs on one
	// session and takes only 1; in version 3, consensus.replicas governs
	// and a differing value is noted in the response.
	Redundancy int `json:"redundancy,omitempty" validate:"omitempty,oneof=1 3 5"`
	// Rules are optional safety rules, passed to the worker; each holds
	// text.
	Rules []string `json:"rules,omitempty" validate:"omitempty,dive,required,text"`
}

// Step is one step a worker took.
type Step struct {
	// Description says what the step did.
	Description string `json:"description"`
	// Tool names the tool the step used, if any.
	Tool string `json:"tool,omitempty"`
	// Output is the step's output, if the worker reports it.
	Output json.RawMessage `json:"output,omitempty"`
}

// Configuration is the configuration a run used.
type Configuration struct {
	// Mode is the execution mode used.
	Mode ExecutionMode `json:"mode,omitempty"`
	// Model is the model used.
	Model string `json:"model,omitempty"`
	// Tier is the tier served.
	Tier Tier `json:"tier,omitempty"`
	// MaxSteps is the step bound applied.
	MaxSteps int `json:"max_steps,omitempty"`
	// TimeoutMS is the time bound applied, in milliseconds.
	TimeoutMS int64 `json:"timeout_ms,omitempty"`
}

// DelegateEvidence is how a delegated result was produced. In version 3,
// Runs holds one entry per replica.
type DelegateEvidence struct {
	// Steps are the steps taken.
	Steps []Step `json:"steps"`
	// Tools are the tools used.
	Tools []string `json:"tools"`
	// Configuration is the configuration used.
	Configuration Configuration `json:"configuration"`
	// Runs holds the per-replica evidence of a version 3 call.
	Runs []Run `json:"runs,omitempty"`
	// Usage adds up what the runs reported spending, when any did.
	Usage *Usage `json:"usage,omitempty"`
}

// DelegateV2Response is the answer to a delegate v2 call: the result plus
// structured evidence. The interface describes it without field names; these
// are ours.
type DelegateV2Response struct {
	// SessionID is the session that ran the task.
	SessionID SessionID `json:"session_id"`
	// TaskID identifies the task.
	TaskID string `json:"task_id"`
	// Result is the output, any JSON value.
	Result json.RawMessage `json:"result"`
	// Evidence is how the result was produced.
	Evidence DelegateEvidence `json:"evidence"`
}

// ValidateTask is the part of a validate request shared by versions 2 and
// 3: the claim and how to judge it.
type ValidateTask struct {
	// RequestID is the caller's identifier for the request, echoed in
	// the response: optional, and when given text of at most 200
	// characters (an empty or blank one is refused, not read as absent).
	RequestID string `json:"request_id,omitempty" validate:"omitempty,text,max=200"`
	// Claim is the claimed result to check.
	Claim Claim `json:"claim"`
	// Policy sets the tier, redundancy and rules.
	Policy ValidatePolicy `json:"policy"`
	// Context is task or application metadata relevant to the verdict.
	Context map[string]any `json:"context,omitempty"`
	// Actor optionally names who makes the claim.
	Actor json.RawMessage `json:"actor,omitempty"`
	// Metadata is optional caller metadata.
	Metadata map[string]any `json:"metadata,omitempty"`
}

// ValidateV2Request is the body of POST /api/v2/validate.
type ValidateV2Request struct {
	// SessionID is the session used.
	SessionID SessionID `json:"session_id" validate:"required,gt=0"`
	ValidateTask
}

// Claim is claim of a validate v2 request.
type Claim struct {
	// Type is the kind of claim: values seen are summary, json_tool_call,
	// trade_decision, classification, tool_output, plan_step.
	Type string `json:"type" validate:"required,text"`
	// Description says what was asked.
	Description string `json:"description,omitempty"`
	// Output is the claimed result, any JSON value but null.
	Output json.RawMessage `json:"output" validate:"present"`
	// InputHash is a hash of the input the claim was made from.
	InputHash string `json:"input_hash,omitempty"`
}

// ValidatePolicy is policy of a validate v2 request.
type ValidatePolicy struct {
	// Tier is fast, safe, oracle or balanced; empty means any tier.
	Tier Tier `json:"tier,omitempty" validate:"omitempty,tier"`
	// Redundancy is 1, 3 or 5 when set. Version 2 validate runs that many
	// replicas, session_id first (see Engine.ValidateV2); in version 3,
	// consensus.replicas governs and a differing value is noted in the
	// response.
	Redundancy int `json:"redundancy,omitempty" validate:"omitempty,oneof=1 3 5"`
	// Rules are rules such as consistency or non-hallucination; each
	// holds text.
	Rules []string `json:"rules,omitempty" validate:"omitempty,dive,required,text"`
	// TimeoutMS bounds each run in milliseconds; 0 means the server's
	// default. (An addition: the interface names timeout_ms for delegate only.)
	TimeoutMS int64 `json:"timeout_ms,omitempty" validate:"omitempty,gt=0,lte=3600000"`
}

// Score is one named score of a validation.
type Score struct {
	// Name is what was scored, such as a rule or "confidence".
	Name string `json:"name"`
	// Value is the score, usually between 0 and 1.
	Value float64 `json:"value"`
}

// ValidateEvidence is evidence of a validate v2 response.
type ValidateEvidence struct {
	// Runs holds one entry per run (per replica in version 3).
	Runs []Run `json:"runs"`
	// Scores are scores reported by the runs.
	Scores []Score `json:"scores"`
	// Usage adds up what the runs reported spending, when any did.
	Usage *Usage `json:"usage,omitempty"`
}

// ValidateV2Response is the answer to a validate v2 call.
type ValidateV2Response struct {
	// RequestID echoes the request's request_id.
	RequestID string `json:"request_id,omitempty"`
	// Verdict is VALID, INVALID, RETRY or NEEDS_SPEC.
	Verdict Verdict `json:"verdict"`
	// Confidence is a fraction between 0 and 1.
	Confidence float64 `json:"confidence"`
	// Reasons are coarse explanations.
	Reasons []string `json:"reasons"`
	// Evidence holds the runs and scores.
	Evidence ValidateEvidence `json:"evidence"`
}

// Run is the evidence of one run or replica.
type Run struct {
	// Replica is the replica's index, from 0.
	Replica int `json:"replica"`
	// SessionID is the session the run used.
	SessionID SessionID `json:"session_id"`
	// TaskID identifies the run's task.
	TaskID string `json:"task_id"`
	// Label is the run's verdict, or OK, TIMEOUT, ERROR or CANCELLED.
	Label Label `json:"label"`
	// Confidence is the confidence the worker reported.
	Confidence float64 `json:"confidence,omitempty"`
	// Reasons are the worker's reasons.
	Reasons []string `json:"reasons,omitempty"`
	// Output is a delegate run's output.
	Output json.RawMessage `json:"output,omitempty"`
	// Steps are the steps a delegate run took.
	Steps []Step `json:"steps,omitempty"`
	// Tools are the tools a delegate run used.
	Tools []string `json:"tools,omitempty"`
	// Configuration is the configuration the run used.
	Configuration *Configuration `json:"configuration,omitempty"`
	// LatencyMS is the run's duration in milliseconds.
	LatencyMS int64 `json:"latency_ms"`
	// Error says why a TIMEOUT or ERROR run gave no answer.
	Error string `json:"error,omitempty"`
	// Usage is what the run reported spending (tokens, cost), if anything.
	Usage *Usage `json:"usage,omitempty"`
	// Reliability is the learned reliability of the run's session that
	// weighed its vote, under aggregation "weighted"; absent otherwise
	// and for a run that cast no vote.
	Reliability *float64 `json:"reliability,omitempty"`
	// Weight is the weight its vote counted with under "weighted":
	// consensus.Weight of Reliability, plus what its reported confidence
	// adds under ConfidenceSlope (consensus.Reliabilities.Evidence).
	Weight *float64 `json:"weight,omitempty"`
	// ConfidenceSlope is what the run's reported confidence was worth
	// to its weight, when its session's confidence says anything.
	ConfidenceSlope *consensus.ConfidenceSlope `json:"confidence_slope,omitempty"`
}

// TotalUsage adds up the usage the runs report; it is nil when none does.
func TotalUsage(runs []Run) *Usage {
	var total *Usage
	for _, r := range runs {
		if r.Usage == nil {
			continue
		}
		if total == nil {
			total = &Usage{}
		}
		total.Add(*r.Usage)
	}
	return total
}

// Add adds v to u.
func (u *Usage) Add(v Usage) {
	u.PromptTokens += v.PromptTokens
	u.CompletionTokens += v.CompletionTokens
	u.Cost += v.Cost
}

// Usage is what a run spent, as its worker reports it.
type Usage struct {
	// PromptTokens is the count of input tokens.
	PromptTokens int64 `json:"prompt_tokens,omitempty"`
	// CompletionTokens is the count of output tokens.
	CompletionTokens int64 `json:"completion_tokens,omitempty"`
	// Cost is the cost in the host's currency unit.
	Cost float64 `json:"cost,omitempty"`
}
