package router

import (
	"context"
	"encoding/json"
	"slices"
)

// ValidateV3 judges the claim on consensus.replicas sessions at once and
// returns the majority verdict.
//
// # Selection
//
// The candidates are the sessions of consensus.session_pool in its order,
// or, when it is empty, every session of the engine in the order given to
// [NewEngine]; session_id, when set, goes first whether or not the pool
// lists it. Candidates that do not serve policy.tier or are cooling down
// are dropped. The rest, after session_id, are ranked by reputation (see
// [Engine.Rank]): sessions at their share bound last; the others by a
// draw from each session's reliability, read as a Beta posterior over
// the outcomes reported on it (reputation.Book.Evidence), so that a
// session runs first as often as it may be the most reliable (Thompson
// sampling); the least used first one call in [DefaultExploreEvery].
// Sessions that nothing tells apart (no outcome reported yet) are
// rotated by one place per version 3 call, so equal sessions share the
// runs evenly; a new session, which holds only the prior's evidence,
// runs often until its record tells it apart. With reputation off they
// are only rotated, so that load spreads over them. The engine then takes
// sessions in that order, first only from worker pools not yet used, then
// from any pool, until it has consensus.replicas distinct sessions. A
// session never runs two replicas of one call. The call reads what it
// needs of the book once, as it ranks (reputation.Book.Snapshot): with
// the candidates' records, a weighted call's calibration map and a
// delegation's coincidence of wrong answers, which its confidence and its
// learning then use; a caller that read them already hands them over
// ([WithReading]). When the book's store fails that read (a database
// out of reach), the call runs all the same, and the failure is logged:
// availability over freshness. Its candidates are ordered as sessions
// nothing tells apart, a weighted call weighs every vote at the prior's
// reliability, which each run and the reputation snapshot record, and
// its confidence is the conservative number, its calibration basis
// "uncalibrated"; what the call teaches is lost while the store is out
// of reach.
//
// Unknown ids in session_id or consensus.session_pool are a 400 *Error
// naming the field ("consensus.session_pool[2]"). More replicas than the
// candidates that serve the tier, healthy or not, is a 400 *Error naming
// consensus.replicas (rule "servable"): this engine can never serve the
// request, and a retry would fail the same way. Too few of them healthy
// now give a 503 *Error with code insufficient_sessions. Either way no
// replica runs.
//
// # Votes and policies
//
// Each replica votes its label: its verdict (RETRY and NEEDS_SPEC are
// verdicts like VALID and INVALID, and may win), or TIMEOUT or ERROR
// when it gave no answer. Failed replicas are non-votes unless
// [WithFailureMode] makes them negative evidence. The replicas are
// aggregated by package consensus's majority, whose doc gives the tie
// rule and the confidence formula, or under consensus.aggregation
// "weighted" by consensus.Weighted over the sessions' learned
// reliabilities (each run then records its reliability and weight, and
// the consensus block weight_by and the reputation snapshot); every call
// of two or more votes teaches the engine's reputation book
// ([WithReputation]). The response's confidence is the
// consensus confidence, and its reasons are those of the replicas that
// voted the winning verdict. The consensus block's low_confidence is set
// when replicas disagreed, when no replica won, or when the winner holds
// no more than half of the replicas that reported.
//
// Under best_effort (the default) and fail_hard the call returns as soon
// as the outcome is decided (an early quorum, such as 3 of 5 agreeing)
// and cancels the replicas still running, which are recorded as
// CANCELLED. Under return_all it waits for every replica, since it
// reports them all.
//
// A deadline on ctx bounds the call like policy.timeout_ms: the engine
// stops waiting for votes shortly before it (a tenth of the time left,
// at most 100ms, is kept to answer), records the replicas still running
// as TIMEOUT, and answers from the votes in, before the deadline, even
// when a worker ignores its cancelled context; with no vote in, a 504
// *Error with code timeout.
//
// A replica cut short before it answered is no vote and no dissent:
// consensus.replicas still counts it (it is the count the request asked
// for, every replica launched), and consensus.verdicts shows it as
// CANCELLED, but agreement and confidence leave it out, so a unanimous
// early quorum of 3 of 5 reads agreement 1. A replica whose answer
// arrives after the decision, before the call returns, keeps its label
// and answer, and counts against the winner if it dissents. Agreement is
// the winning group over the replicas that answered (and the failed ones,
// when failures are negative evidence); confidence is
// consensus.Posterior of the same counts; both can be recomputed from
// consensus.verdicts.
//
// The cases of docs/INTERFACE.md (section 6.3), for each policy (a status is an
// *Error with that code):
//
//	row                       best_effort           return_all             fail_hard
//	replicas agree            the verdict           the verdict            the verdict
//	replicas disagree         the largest group's   the verdict of a       409 disagreement
//	                          verdict (a tie: the   strict majority,
//	                          more cautious one)    or none
//	all replicas fail         502 all_replicas_     200 with no verdict    as best_effort
//	                          failed; 504 timeout
//	                          if all timed out
//	some time out, as         the verdict among     as best_effort, with   the verdict among
//	non-votes (the default)   the answers           a strict majority      the answers
//	some time out, as         409 disagreement      no verdict when the    409 disagreement
//	negative evidence         when the failures     failures match the
//	                          match the largest     largest group
//	                          group
//
// A response without a verdict (return_all) has confidence 0 and an empty
// verdict (a null result for delegate); its consensus block keeps the
// figures of the largest group. Every one of these errors carries the
// evidence in Extra: {"runs":[...],"consensus":{...}}, the runs and the
// consensus block the response would have held.
//
// When ctx ends before the outcome is decided, the call returns ctx's
// error; the replicas are cancelled and the call waits for them as the
// [Engine] doc describes.
func (e *Engine) ValidateV3(ctx context.Context, req *ValidateV3Request) (*ValidateV3Response, error) {
	if req == nil {
		return nil, errNilRequest()
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	job, timeout := e.validateJob(3, &req.ValidateTask)
	call, err := e.consensus(ctx, req.SessionID, &req.Consensus, v3Pool, req.Policy.Tier, job, timeout)
	if err != nil {
		return nil, err
	}
	resp := &ValidateV3Response{RequestID: req.RequestID, Consensus: call.block}
	resp.Verdict, resp.Confidence, resp.Reasons, resp.Evidence = call.verdict()
	resp.Consensus.Notes = redundancyNote(req.Policy.Redundancy, req.Consensus.Replicas)
	return resp, nil
}

// DelegateV3 runs the workflow on consensus.replicas sessions at once and
// returns the majority's output. Outputs agree under the engine's answer
// key ([WithAnswerKey]; by default equal canonical JSON, strings compared
// with white space trimmed and folded). Result is the output of the first
// run of the winning group, and evidence its steps, tools and
// configuration, plus evidence.runs with every replica's run. Selection,
// policies and errors are those of [Engine.ValidateV3].
//
// Under consensus.aggregation "median" or "median_of_means" the outputs
// are numbers (consensus.ParseNumber: a JSON number, or a string written
// as one), agreeing within consensus.tolerance around their aggregate
// (consensus.Median, consensus.MedianOfMeans; the weighted median under
// weight_by "reputation"). Result is the aggregate as a JSON number, a
// run whose output holds no number is no vote and says why in its
// error, and the consensus block adds the tolerance, each replica's
// number and the aggregate, so that every figure is recomputable from
// it. An early quorum cuts the running replicas short only when nothing
// they could answer would move the aggregate beyond the tolerance.
func (e *Engine) DelegateV3(ctx context.Context, req *DelegateV3Request) (*DelegateV3Response, error) {
	if req == nil {
		return nil, errNilRequest()
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	job, timeout := e.delegateJob(3, &req.DelegateTask)
	call, err := e.consensus(ctx, req.SessionID, &req.Consensus, v3Pool, req.Policy.Tier, job, timeout)
	if err != nil {
		return nil, err
	}
	resp := &DelegateV3Response{
		TaskID:    e.newTaskID(),
		Result:    json.RawMessage("null"),
		Evidence:  DelegateEvidence{Steps: []Step{}, Tools: []string{}, Runs: call.runs, Usage: TotalUsage(call.runs)},
		Consensus: call.block,
	}
	resp.Consensus.Notes = redundancyNote(req.Policy.Redundancy, req.Consensus.Replicas)
	if w := call.winner; w != nil {
		resp.Result = w.output
		if call.result != nil {
			resp.Result = call.result
		}
		resp.Evidence.Steps, resp.Evidence.Tools = orEmpty(w.Steps), orEmpty(w.Tools)
		resp.Evidence.Configuration = *w.Configuration
	}
	return resp, nil
}

// v3Pool is the JSON path of the session pool of a version 3 request.
const v3Pool = "consensus.session_pool"

// consensusCall is a finished version 3 call: what [Engine.consensus]
// returns from [Engine.fanOut] (engine_v3_fanout.go), which picks the
// sessions, runs the replicas and applies the disagreement policy.
type consensusCall struct {
	outcomes []*outcome
	runs     []Run
	block    ConsensusResponse
	winner   *outcome // the first run of the winning group; nil when none won
	// result, when set, is a delegation's result in place of the
	// winner's output: the aggregate of a numeric strategy.
	result json.RawMessage
}

// verdict returns the parts of a validate or factcheck response.
func (c *consensusCall) verdict() (Verdict, float64, []string, ValidateEvidence) {
	var v Verdict
	var confidence float64
	if c.winner != nil {
		v, confidence = Verdict(c.winner.Label), c.block.Confidence
	}
	ev := ValidateEvidence{
		Runs:  c.runs,
		Usage: TotalUsage(c.runs),
		Scores: []Score{
			{Name: "agreement", Value: c.block.Agreement},
			{Name: "confidence", Value: c.block.Confidence},
		},
	}
	return v, confidence, c.reasons(), ev
}

// reasons returns the reasons of the winning runs, in replica order,
// without repeats.
func (c *consensusCall) reasons() []string {
	r := []string{}
	for _, o := range c.outcomes {
		if !c.member(o) {
			continue
		}
		for _, s := range o.Reasons {
			if !slices.Contains(r, s) {
				r = append(r, s)
			}
		}
	}
	return r
}

// member reports whether o voted with the winner's label. Verdict runs
// agree by label alone.
func (c *consensusCall) member(o *outcome) bool {
	return c.winner != nil && o.answered() && o.Label == c.winner.Label
}

// evidence is the Extra of a version 3 error: every run and the consensus
// block.
func (c *consensusCall) evidence() json.RawMessage {
	raw, _ := json.Marshal(struct {
		Runs      []Run             `json:"runs"`
		Consensus ConsensusResponse `json:"consensus"`
	}{c.runs, c.block}) // a run holds only encodable values (see inspect)
	return raw
}
