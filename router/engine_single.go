package router

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"time"

	"github.com/vouchkit/vouch/problem"
)

// errNilRequest is the error of a call given a nil request.
func errNilRequest() error {
	return problem.New(http.StatusBadRequest, problem.CodeInvalidRequest, "the request is missing")
}

// unknownSession is the 400 error naming an id the engine does not know.
func unknownSession(field string, id SessionID) *Error {
	return problem.Invalid([]FieldError{{
		Field: field, Rule: "known_session",
		Message: fmt.Sprintf("session %d is not a session of this router", id),
	}})
}

// single runs job on the session a version 1 or 2 request names, under
// the call timeout. It returns the run when it answered. A run that did
// not answer gives a 502 *Error (code all_replicas_failed) or, when it
// timed out, a 504 (code timeout), each carrying the run as
// {"runs":[...]} in Extra; when ctx itself ended, its error.
func (e *Engine) single(ctx context.Context, id SessionID, tier Tier, job *Job, timeout time.Duration) (*outcome, error) {
	if err := checkTraceID(ctx); err != nil {
		return nil, err
	}
	s, err := e.named(id, tier)
	if err != nil {
		return nil, err
	}
	cctx, cancel := context.WithTimeout(ctx, e.callTimeout)
	defer cancel()
	job.SessionID, job.TaskID = id, e.newTaskID()
	o := e.run(cctx, ctx, s, job, timeout)
	switch {
	case o.answered():
		return o, nil
	case ctx.Err() != nil:
		return nil, ctx.Err()
	}
	var p *Error
	if o.Label == LabelTimeout {
		p = problem.Newf(http.StatusGatewayTimeout, problem.CodeTimeout, "session %d: %s", id, o.Error)
	} else {
		p = problem.Newf(http.StatusBadGateway, problem.CodeAllReplicasFailed, "session %d: %s", id, o.Error)
	}
	p.Extra, _ = json.Marshal(struct {
		Runs []Run `json:"runs"`
	}{[]Run{o.Run}}) // a run holds only encodable values (see inspect)
	return nil, p
}

// named returns the session a version 1 or 2 request names as
// session_id, or why it cannot run there: a 400 *Error for a session the
// engine does not know (naming session_id) or that does not serve tier
// (naming policy.tier), a 503 for one cooling down.
func (e *Engine) named(id SessionID, tier Tier) (*session, error) {
	s := e.byID[id]
	if s == nil {
		return nil, unknownSession("session_id", id)
	}
	if !s.serves(tier) {
		return nil, problem.Invalid([]FieldError{{
			Field: "policy.tier", Rule: "served_by_session",
			Message: fmt.Sprintf("session %d does not serve tier %q; it serves %v", id, tier, s.Tiers),
		}})
	}
	if ok, until := s.healthy(e.now()); !ok {
		return nil, problem.Newf(http.StatusServiceUnavailable, problem.CodeUnavailable,
			"session %d is cooling down after repeated failures until %s", id, until.UTC().Format(time.RFC3339))
	}
	return s, nil
}

// outputText is a delegation's output as text: a string output as it is,
// anything else as its JSON.
func outputText(o *outcome) string {
	if s, ok := o.result.Output.(string); ok {
		return s
	}
	return string(o.output)
}

// orEmpty returns s, or an empty slice when s is nil, so that lists encode
// as [] rather than null.
func orEmpty[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// DelegateV1 runs the prompt on the request's session. The job's
// Objective is task_request_input; a string output is returned as it is,
// any other output as its JSON.
//
// An unknown session_id is a 400 *Error naming session_id. A session
// cooling down gives 503 (code unavailable). A run that fails gives 502
// (code all_replicas_failed), one that times out 504 (code timeout), both
// with the run's evidence in Extra as {"runs":[...]}.
func (e *Engine) DelegateV1(ctx context.Context, req *DelegateV1Request) (*DelegateV1Response, error) {
	if req == nil {
		return nil, errNilRequest()
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	job := &Job{
		Kind: KindDelegate, Version: 1,
		Objective: req.TaskRequestInput, Domain: req.TaskDomain, TaskType: req.TaskType,
		EvaluationMode: req.EvaluationMode, WebURL: req.WebURL,
	}
	timeout := e.budgets(job, 0, 0)
	o, err := e.single(ctx, req.SessionID, "", job, timeout)
	if err != nil {
		return nil, err
	}
	return &DelegateV1Response{SessionID: o.SessionID, TaskID: o.TaskID, TaskResultOutput: outputText(o)}, nil
}

// ValidateV1 judges task_result_output on the request's session. The job
// carries task_request_input as Claim.Description, task_result_output as
// Claim.Output (a JSON string), task_type as Claim.Type and
// acceptance_criteria as Rules. Errors are those of
// [Engine.DelegateV1].
func (e *Engine) ValidateV1(ctx context.Context, req *ValidateV1Request) (*ValidateV1Response, error) {
	if req == nil {
		return nil, errNilRequest()
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	output, _ := json.Marshal(req.TaskResultOutput) // a string always encodes
	job := &Job{
		Kind: KindValidate, Version: 1,
		Claim: &Claim{Type: req.TaskType, Description: req.TaskRequestInput, Output: output},
		Rules: req.AcceptanceCriteria, EvaluationMode: req.EvaluationMode,
		Domain: req.TaskDomain, TaskType: req.TaskType,
	}
	timeout := e.budgets(job, 0, 0)
	o, err := e.single(ctx, req.SessionID, "", job, timeout)
	if err != nil {
		return nil, err
	}
	return &ValidateV1Response{
		SessionID: o.SessionID, TaskID: o.TaskID,
		Verdict: o.result.Verdict, Confidence: o.Confidence, Reasons: orEmpty(o.Reasons),
	}, nil
}

// delegateJob returns the job of a delegate v2 or v3 request, and its
// time budget.
func (e *Engine) delegateJob(version int, t *DelegateTask) (*Job, time.Duration) {
	job := &Job{
		Kind: KindDelegate, Version: version, Tier: t.Policy.Tier,
		Objective: t.Objective, Input: t.Input, Execution: t.Execution,
		Tools: t.Tools, Workflow: t.Workflow, Rules: t.Policy.Rules, Metadata: t.Metadata,
	}
	return job, e.budgets(job, t.Execution.MaxSteps, t.Policy.TimeoutMS)
}

// validateJob returns the job of a validate v2 or v3 request, and its
// time budget.
func (e *Engine) validateJob(version int, t *ValidateTask) (*Job, time.Duration) {
	claim := t.Claim
	job := &Job{
		Kind: KindValidate, Version: version, Tier: t.Policy.Tier,
		Claim: &claim, Rules: t.Policy.Rules, Context: t.Context, Metadata: t.Metadata,
	}
	job.liftTaskContext()
	return job, e.budgets(job, 0, t.Policy.TimeoutMS)
}

// DelegateV2 runs the workflow on the request's session, under
// execution.max_steps and policy.timeout_ms (or the engine's defaults).
// The response carries the output as result, and the steps, tools,
// configuration and usage the run reported as evidence.
//
// A session that does not serve policy.tier is a 400 *Error naming
// policy.tier; other errors are those of [Engine.DelegateV1].
func (e *Engine) DelegateV2(ctx context.Context, req *DelegateV2Request) (*DelegateV2Response, error) {
	if req == nil {
		return nil, errNilRequest()
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	job, timeout := e.delegateJob(2, &req.DelegateTask)
	o, err := e.single(ctx, req.SessionID, req.Policy.Tier, job, timeout)
	if err != nil {
		return nil, err
	}
	return &DelegateV2Response{
		SessionID: o.SessionID, TaskID: o.TaskID, Result: o.output,
		Evidence: DelegateEvidence{Steps: orEmpty(o.Steps), Tools: orEmpty(o.Tools), Configuration: *o.Configuration,
			Usage: TotalUsage([]Run{o.Run})},
	}, nil
}

// ValidateV2 judges the claim on the request's session. The response's
// confidence is the worker's; evidence.runs holds the one run,
// evidence.scores one score named "confidence", and evidence.usage what
// the run reported spending. Errors are those of
// [Engine.DelegateV2].
//
// With policy.redundancy 3 or 5 (docs/INTERFACE.md, 5.5), it runs that many
// replicas under best_effort, as a version 3 validation with consensus
// {"replicas": policy.redundancy} whose first session is session_id and
// the others drawn from the sessions that serve policy.tier (selection as
// [Engine.ValidateV3] documents it): the verdict is the majority's, the
// confidence and scores are the consensus ones (consensus.Posterior), and
// evidence.runs holds every replica's run. Its errors are those of
// [Engine.ValidateV3], and those of one replica for a session_id that
// does not serve policy.tier or is cooling down. A redundancy of 1, or
// none, runs on session_id alone.
func (e *Engine) ValidateV2(ctx context.Context, req *ValidateV2Request) (*ValidateV2Response, error) {
	if req == nil {
		return nil, errNilRequest()
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if n := req.Policy.Redundancy; n == Replicas3 || n == Replicas5 {
		// The named session runs first, or the call is refused as with
		// one replica: the selection would drop it in silence.
		if _, err := e.named(req.SessionID, req.Policy.Tier); err != nil {
			return nil, err
		}
		job, timeout := e.validateJob(2, &req.ValidateTask)
		cons := &ConsensusRequest{Replicas: n, DisagreementPolicy: DisagreeBestEffort}
		// The body has no session pool, and names its replicas policy.redundancy.
		call, err := e.consensus(ctx, req.SessionID, cons, "", req.Policy.Tier, job, timeout)
		if err != nil {
			return nil, err
		}
		resp := &ValidateV2Response{RequestID: req.RequestID}
		resp.Verdict, resp.Confidence, resp.Reasons, resp.Evidence = call.verdict()
		resp.Reasons = orEmpty(resp.Reasons)
		return resp, nil
	}
	job, timeout := e.validateJob(2, &req.ValidateTask)
	o, err := e.single(ctx, req.SessionID, req.Policy.Tier, job, timeout)
	if err != nil {
		return nil, err
	}
	return &ValidateV2Response{
		RequestID: req.RequestID, Verdict: o.result.Verdict, Confidence: o.Confidence,
		Reasons: orEmpty(o.Reasons),
		Evidence: ValidateEvidence{
			Runs:   []Run{o.Run},
			Scores: []Score{{Name: "confidence", Value: o.Confidence}},
			Usage:  TotalUsage([]Run{o.Run}),
		},
	}, nil
}
