package router

// DelegateV1Request is the body of POST /api/v1/delegate: a
// prompt run on one session.
type DelegateV1Request struct {
	// SessionID is the session used for funding and routing.
	SessionID SessionID `json:"session_id" validate:"required,gt=0"`
	// TaskRequestInput is the prompt.
	TaskRequestInput string `json:"task_request_input" validate:"required,text"`
	// TaskDomain is an optional hint.
	TaskDomain string `json:"task_domain,omitempty"`
	// TaskType is an optional hint.
	TaskType string `json:"task_type,omitempty"`
	// EvaluationMode is optional; a value seen is "high_reliability".
	EvaluationMode string `json:"evaluation_mode,omitempty"`
	// WebURL is optional context: an absolute http or https URL.
	WebURL string `json:"web_url,omitempty" validate:"omitempty,http_url"`
}

// DelegateV1Response is the answer to a delegate v1 call. The interface does not
// show it; it mirrors the v1 field style: the output is task_result_output,
// the name validate v1 takes it under.
type DelegateV1Response struct {
	// SessionID is the session that ran the task.
	SessionID SessionID `json:"session_id"`
	// TaskID identifies the task the router created.
	TaskID string `json:"task_id"`
	// TaskResultOutput is the output.
	TaskResultOutput string `json:"task_result_output"`
}

// ValidateV1Request is the body of POST /api/v1/validate.
type ValidateV1Request struct {
	// SessionID is the session used.
	SessionID SessionID `json:"session_id" validate:"required,gt=0"`
	// TaskRequestInput is the original request.
	TaskRequestInput string `json:"task_request_input" validate:"required,text"`
	// TaskResultOutput is the output to check.
	TaskResultOutput string `json:"task_result_output" validate:"required,text"`
	// TaskDomain is an optional hint.
	TaskDomain string `json:"task_domain,omitempty"`
	// TaskType is an optional hint.
	TaskType string `json:"task_type,omitempty"`
	// AcceptanceCriteria are free-form rules such as "accuracy",
	// "conciseness", "non_hallucination"; each holds text.
	AcceptanceCriteria []string `json:"acceptance_criteria,omitempty" validate:"omitempty,dive,required,text"`
	// EvaluationMode says how to judge; a value seen is "llm_judge".
	EvaluationMode string `json:"evaluation_mode,omitempty"`
}

// ValidateV1Response is the answer to a validate v1 call. The interface does not
// show it; it carries the verdict contract of version 2 without evidence.
type ValidateV1Response struct {
	// SessionID is the session that judged.
	SessionID SessionID `json:"session_id"`
	// TaskID identifies the task the router created.
	TaskID string `json:"task_id"`
	// Verdict is VALID, INVALID, RETRY or NEEDS_SPEC.
	Verdict Verdict `json:"verdict"`
	// Confidence is a fraction between 0 and 1.
	Confidence float64 `json:"confidence"`
	// Reasons are coarse explanations.
	Reasons []string `json:"reasons"`
}

// FactcheckV1Request is the body of POST /api/v1/factcheck, also served
// as /api/v1/fact-check, in the normal, trial and x402 variants: the
// public router's factcheck. Its documentation shows only the two modes,
// redundant checks across at least three workers aggregated by the
// protocol, and "mode + policy + consensus + evidence"; no request key is
// public. vouch takes the fields of the version 3 factcheck
// ([FactcheckRequest]) without its consensus block: the redundancy is
// policy.redundancy, 3 (the default) or 5, the candidate sessions are
// session_pool, and the replicas are aggregated by majority under
// best_effort. The answer is a [FactcheckResponse], the same as version
// 3's.
type FactcheckV1Request struct {
	// SessionID, if set, is the first candidate session.
	SessionID SessionID `json:"session_id,omitempty" validate:"omitempty,gt=0"`
	// RequestID is the caller's identifier for the request, echoed in
	// the response: optional, and when given text of at most 200
	// characters (an empty or blank one is refused, not read as absent).
	RequestID string `json:"request_id,omitempty" validate:"omitempty,text,max=200"`
	// Claim is the statement to check.
	Claim string `json:"claim" validate:"required,text"`
	// Mode is standard (the default when empty) or realtime.
	Mode FactcheckMode `json:"mode,omitempty" validate:"omitempty,oneof=standard realtime"`
	// Context is optional material that bears on the claim.
	Context map[string]any `json:"context,omitempty"`
	// Policy sets the tier, the rules, the time budget of each replica,
	// and the redundancy: 3 (the default when zero) or 5.
	Policy ValidatePolicy `json:"policy"`
	// SessionPool lists candidate sessions. Empty means every session that
	// serves the tier.
	SessionPool []SessionID `json:"session_pool,omitempty" validate:"omitempty,unique,dive,gt=0"`
}
