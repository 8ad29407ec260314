package trust

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
)

// stepResult is one router call, normalized across versions and operations.
type stepResult struct {
	step Step
	// Set on the pooled result only (see Service.tally).
	out           consensus.Outcome
	accepted      bool
	disagreements []Disagreement
	calibration   *reputation.Basis         // with reputation on and a winner
	key           func(any) (string, error) // the call's answer key; nil: DefaultKey
	grouping      *consensus.Grouping       // how the outputs were grouped (WithGrouper)

	verdict    router.Verdict  // validation and arbitration
	result     json.RawMessage // delegation
	confidence float64
	agreement  float64
	verdicts   []router.Label
	runs       []router.Run
	reasons    []string
	consensus  *router.ConsensusResponse
	lead       *reputation.Lead // the leader's record, on the step of its lone run
	dissent    *reputation.Lead // the record of the session whose lone verdict the dissent rule answered
	plurality  *Plurality       // what a plurality's confidence was stated from
	lone       *Lone            // what the stop settled one answer alone on, or declined to
}

// runOn makes the router call of one rung: on session id alone when id is
// set, else on the service's pool. A one-replica rung on the single
// session (WithSingleSession) calls version 2.
func (s *Service) runOn(ctx context.Context, req *Request, r rung, id router.SessionID) (st stepResult, err error) {
	ctx, span := s.tel.startStep(ctx, r.replicas, r.tier)
	defer func() { endSpan(span, err) }()
	if r.replicas == 1 && s.session != 0 && id == s.session {
		return s.runV2(ctx, req, r)
	}
	pool := s.pool
	if id != 0 {
		pool = []router.SessionID{id}
	}
	return s.runPool(ctx, req, r, pool)
}

// runPool makes the version 3 router call of one rung on the sessions of
// pool (all of the router's when empty).
func (s *Service) runPool(ctx context.Context, req *Request, r rung, pool []router.SessionID) (stepResult, error) {
	cons := router.ConsensusRequest{
		Replicas:           r.replicas,
		SessionPool:        pool,
		Aggregation:        router.AggregationMajority,
		DisagreementPolicy: r.policy,
	}
	switch {
	case req.numeric():
		cons.Aggregation, cons.Tolerance = router.AggregationMedian, req.Task.Tolerance
	case s.keep != nil:
		cons.Aggregation, cons.WeightBy = router.AggregationWeighted, router.WeightByReputation
	}
	if req.Mode == ModeDelegation {
		resp, err := s.router.DelegateV3(ctx, &router.DelegateV3Request{DelegateTask: delegateTask(req, r.tier), Consensus: cons})
		if err != nil {
			return failedStep(err, "/api/v3/delegate", r)
		}
		st := stepResult{
			result: resp.Result, confidence: resp.Consensus.Confidence, agreement: resp.Consensus.Agreement,
			verdicts: resp.Consensus.Verdicts, runs: resp.Evidence.Runs,
			consensus: &resp.Consensus,
		}
		st.step = newStep("/api/v3/delegate", r, resp.TaskID, string(router.LabelOK), st)
		if len(resp.Result) == 0 || string(resp.Result) == "null" {
			st.step.Outcome = ""
		}
		return st, nil
	}
	vt := validateTask(req, r.tier)
	resp, err := s.router.ValidateV3(ctx, &router.ValidateV3Request{ValidateTask: vt, Consensus: cons})
	if err != nil {
		return failedStep(err, "/api/v3/validate", r)
	}
	st := stepResult{
		verdict: resp.Verdict, confidence: resp.Consensus.Confidence, agreement: resp.Consensus.Agreement,
		verdicts: resp.Consensus.Verdicts, runs: resp.Evidence.Runs,
		reasons: resp.Reasons, consensus: &resp.Consensus,
	}
	st.step = newStep("/api/v3/validate", r, resp.RequestID, string(resp.Verdict), st)
	return st, nil
}

// runV2 makes a single-session rung's call on the version 2 endpoints.
func (s *Service) runV2(ctx context.Context, req *Request, r rung) (stepResult, error) {
	if req.Mode == ModeDelegation {
		resp, err := s.router.DelegateV2(ctx, &router.DelegateV2Request{SessionID: s.session, DelegateTask: delegateTask(req, r.tier)})
		if err != nil {
			return stepResult{}, err
		}
		cfg := resp.Evidence.Configuration
		run := router.Run{SessionID: resp.SessionID, TaskID: resp.TaskID, Label: router.LabelOK, Output: resp.Result,
			Steps: resp.Evidence.Steps, Tools: resp.Evidence.Tools, Configuration: &cfg, Usage: resp.Evidence.Usage}
		st := stepResult{result: resp.Result, confidence: 1, agreement: 1, verdicts: []router.Label{router.LabelOK}, runs: []router.Run{run}}
		st.step = newStep("/api/v2/delegate", r, resp.TaskID, string(router.LabelOK), st)
		return st, nil
	}
	resp, err := s.router.ValidateV2(ctx, &router.ValidateV2Request{SessionID: s.session, ValidateTask: validateTask(req, r.tier)})
	if err != nil {
		return stepResult{}, err
	}
	runs := resp.Evidence.Runs
	st := stepResult{
		verdict: resp.Verdict, confidence: resp.Confidence, agreement: 1,
		verdicts: []router.Label{router.Label(resp.Verdict)}, runs: runs, reasons: resp.Reasons,
	}
	st.step = newStep("/api/v2/validate", r, resp.RequestID, string(resp.Verdict), st)
	return st, nil
}

// failedStep turns a fail_hard disagreement into a step without a winner,
// keeping the per-replica evidence the error carries; any other error, or
// evidence that does not decode, ends the call.
func failedStep(err error, route string, r rung) (stepResult, error) {
	var perr *problem.Details
	if !errors.As(err, &perr) || perr.Code != problem.CodeDisagreement {
		return stepResult{}, unservable(err, r)
	}
	st, err := evidenceStep(perr, route, r)
	if err != nil {
		return stepResult{}, err
	}
	st.step.Error = perr.Detail
	return st, nil
}

// evidenceStep is the step without a winner of a router call that
// failed with perr: the runs and consensus block its evidence holds,
// none when it holds none. Evidence that does not decode is an error
// (see problemEvidence).
func evidenceStep(perr *problem.Details, route string, r rung) (stepResult, error) {
	var extra struct {
		Runs      []router.Run             `json:"runs"`
		Consensus router.ConsensusResponse `json:"consensus"`
	}
	if err := problemEvidence(perr, &extra); err != nil {
		return stepResult{}, err
	}
	st := stepResult{
		agreement: extra.Consensus.Agreement, confidence: extra.Consensus.Confidence,
		verdicts: extra.Consensus.Verdicts, runs: extra.Runs, consensus: &extra.Consensus,
	}
	st.step = newStep(route, r, "", "", st)
	return st, nil
}

// problemEvidence decodes into ev the evidence perr, a router call's
// problem, carries in extra ({"runs":[...],"consensus":{...}}), leaving
// ev as it is when it carries none. Evidence that does not decode is an
// error wrapping router.ErrMalformedResponse that names the member: read
// in part, or not at all, it would state runs, and votes, the router never
// gave. The Client refuses such evidence itself; another router.Service
// (an in-process fake, a host's own) is checked here.
func problemEvidence(perr *problem.Details, ev any) error {
	if len(perr.Extra) == 0 {
		return nil
	}
	if err := json.Unmarshal(perr.Extra, ev); err != nil {
		return fmt.Errorf("trust: router problem %d %s: %w: extra: %v", perr.Status, perr.Code, router.ErrMalformedResponse, err)
	}
	return nil
}

func newStep(route string, r rung, taskID, outcome string, st stepResult) Step {
	step := Step{
		Route: route, Tier: r.tier, Replicas: r.replicas, Outcome: outcome,
		Agreement: st.agreement, Confidence: st.confidence, TaskID: taskID,
		Sessions: make([]router.SessionID, 0, len(st.runs)), TaskIDs: make([]string, 0, len(st.runs)),
	}
	for _, run := range st.runs {
		step.Sessions = append(step.Sessions, run.SessionID)
		step.TaskIDs = append(step.TaskIDs, run.TaskID)
	}
	return step
}

// delegateTask maps a delegation onto the router's delegate task.
func delegateTask(req *Request, tier router.Tier) router.DelegateTask {
	return router.DelegateTask{
		Objective: objective(req.Task),
		Input:     req.Task.Input,
		Policy:    router.Policy{Tier: tier},
		Metadata:  req.Metadata,
	}
}

// objective is the spec when it is a string, else a sentence from the type.
func objective(t Task) string {
	var spec string
	if json.Unmarshal(t.Spec, &spec) == nil && spec != "" {
		return spec
	}
	if strings.TrimSpace(t.Type) != "" {
		return "Perform the " + t.Type + " task on the input."
	}
	return "Complete the task the input describes."
}

// validateTask maps a validation or arbitration onto the router's validate
// task: the claimed result is the claim, and the input, spec and dispute
// context travel in the request's context under "task_input", "task_spec"
// and "dispute_context", the names a router's engine lifts into a worker's
// router.Job.TaskInput, TaskSpec and DisputeContext.
func validateTask(req *Request, tier router.Tier) router.ValidateTask {
	ctx := make(map[string]any, len(req.Context)+3)
	for k, v := range req.Context {
		ctx[k] = v
	}
	if !req.Task.Input.IsZero() {
		ctx["task_input"] = req.Task.Input
	}
	if len(req.Task.Spec) > 0 {
		ctx["task_spec"] = req.Task.Spec
	}
	claimType, desc := req.Task.Type, "Does the claimed result correctly complete the task, as its spec states?"
	if strings.TrimSpace(claimType) == "" { // a label that says nothing
		claimType = "result"
	}
	if req.Mode == ModeArbitration {
		ctx["dispute_context"] = req.Task.DisputeContext
		desc = "Arbitrate a dispute: does the seller's claimed result meet the task spec, given the dispute context?"
	}
	return router.ValidateTask{
		Claim: router.Claim{
			Type:        claimType,
			Description: desc,
			Output:      req.Task.ClaimedResult,
			InputHash:   inputHash(req.Task.Input),
		},
		Policy:   router.ValidatePolicy{Tier: tier},
		Context:  ctx,
		Metadata: req.Metadata,
	}
}

// inputHash is "sha256:<hex>" of the input's JSON, or "" without input.
func inputHash(in router.Input) string {
	if in.IsZero() {
		return ""
	}
	sum := sha256.Sum256(in.Raw())
	return "sha256:" + hex.EncodeToString(sum[:])
}
