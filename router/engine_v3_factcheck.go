package router

import (
	"context"
)

// Factcheck checks the statement on consensus.replicas sessions at once
// and returns the majority verdict, TRUE or FALSE. The job carries the
// claim as Statement and the mode (standard when empty) as FactcheckMode.
// Selection, policies and errors are those of [Engine.ValidateV3].
func (e *Engine) Factcheck(ctx context.Context, req *FactcheckRequest) (*FactcheckResponse, error) {
	if req == nil {
		return nil, errNilRequest()
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	return e.factcheck(ctx, 3, req, v3Pool)
}

// FactcheckV1 checks the statement on policy.redundancy sessions at once
// (3 when zero) drawn from session_pool, and returns the majority
// verdict, TRUE or FALSE, under best_effort: it runs the version 3 fact
// check with consensus {"replicas": policy.redundancy, "session_pool":
// session_pool}, and its job has Version 1. Unknown ids in session_pool
// are a 400 *Error naming "session_pool[i]"; selection, the other errors
// and the response are those of [Engine.Factcheck].
func (e *Engine) FactcheckV1(ctx context.Context, req *FactcheckV1Request) (*FactcheckResponse, error) {
	if req == nil {
		return nil, errNilRequest()
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	v3 := &FactcheckRequest{
		SessionID: req.SessionID, RequestID: req.RequestID, Claim: req.Claim, Mode: req.Mode,
		Context: req.Context, Policy: req.Policy,
		Consensus: ConsensusRequest{Replicas: req.Policy.Redundancy, SessionPool: req.SessionPool, DisagreementPolicy: DisagreeBestEffort},
	}
	if v3.Consensus.Replicas == 0 {
		v3.Consensus.Replicas = Replicas3
	}
	return e.factcheck(ctx, 1, v3, "session_pool")
}

// factcheck runs a validated fact check as version version; poolField is
// the JSON path of req.Consensus.SessionPool in the caller's request.
func (e *Engine) factcheck(ctx context.Context, version int, req *FactcheckRequest, poolField string) (*FactcheckResponse, error) {
	mode := req.Mode
	if mode == "" {
		mode = FactcheckStandard
	}
	job := &Job{
		Kind: KindFactcheck, Version: version, Tier: req.Policy.Tier,
		Statement: req.Claim, FactcheckMode: mode, Rules: req.Policy.Rules, Context: req.Context,
	}
	timeout := e.budgets(job, 0, req.Policy.TimeoutMS)
	call, err := e.consensus(ctx, req.SessionID, &req.Consensus, poolField, req.Policy.Tier, job, timeout)
	if err != nil {
		return nil, err
	}
	resp := &FactcheckResponse{RequestID: req.RequestID, Consensus: call.block}
	resp.Verdict, resp.Confidence, resp.Reasons, resp.Evidence = call.verdict()
	if version == 3 {
		resp.Consensus.Notes = redundancyNote(req.Policy.Redundancy, req.Consensus.Replicas)
	}
	return resp, nil
}
