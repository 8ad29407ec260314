package router

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/internal/problem"
)

// everyVote is an aggregator waiting for every replica: the return_all
// policy reports all replica results, so no straggler is cut short by an
// early quorum.
type everyVote struct{ consensus.Aggregator }

// Decided reports false: the runner then waits for every vote.
func (everyVote) Decided([]consensus.Vote, consensus.Policy) bool { return false }

// consensusCall is a finished version 3 call.
type consensusCall struct {
	outcomes []*outcome
	runs     []Run
	block    ConsensusResponse
	winner   *outcome // the first run of the winning group; nil when none won
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

// member reports whether o voted with the winner's label. Verdict runs
// agree by label alone.
func (c *consensusCall) member(o *outcome) bool {
	return c.winner != nil && o.answered() && o.Label == c.winner.Label
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

// fanOut runs job on c.Replicas sessions picked as documented on
// [Engine.ValidateV3], aggregates their votes and applies the
// disagreement policy. poolField is the JSON path of c.SessionPool in the
// request, for errors.
func (e *Engine) fanOut(ctx context.Context, first SessionID, c *ConsensusRequest, poolField string, tier Tier, job *Job, timeout time.Duration) (*consensusCall, error) {
	scope := scopeOf(job)
	sessions, rel, err := e.pick(ctx, first, c.SessionPool, poolField, tier, c.Replicas, scope)
	if err != nil {
		return nil, err
	}
	agg, err := e.aggregator(c, rel, sessions)
	if err != nil {
		return nil, err
	}
	policy := c.DisagreementPolicy
	if policy == "" {
		policy = DisagreeBestEffort
	}
	// Every replica starts at once under the same budget, so the
	// runner's one deadline is each replica's: no context per replica.
	budget := min(timeout, e.callTimeout)
	runner := consensus.Runner{
		Aggregator: agg,
		Policy: consensus.Policy{
			Disagreement: consensus.DisagreementPolicy(policy),
			Failures:     e.failures,
			Key:          e.answerKey,
		},
		Timeout: budget,
		Abandon: true,
		Grace:   e.stopGrace,
	}

	// Replica i runs reps[i].job, records its run in reps[i].run and
	// then publishes it in reps[i].slot. The call takes the slots of the
	// replicas the runner abandoned, and reads a run only once its
	// replica published it, so that a worker returning late changes
	// nothing the call has returned.
	n := len(sessions)
	type replica struct {
		job  Job
		run  outcome
		slot atomic.Pointer[outcome]
	}
	reps := make([]replica, n)
	var idBuf [5]string // version 3 runs at most 5 replicas
	ids := idBuf[:0]
	if n > len(idBuf) {
		ids = make([]string, 0, n)
	}
	ids = ids[:n]
	e.newTaskIDs(ids)
	short := timeout < e.replicaTimeout // the caller's own bound
	for i := range reps {
		j := &reps[i].job
		*j = *job
		j.SessionID, j.TaskID, j.Replica = sessions[i].ID, ids[i], i
		reps[i].run.short = short
	}
	began, start := time.Now(), e.now()
	out, err := runner.Run(ctx, n, func(rctx context.Context, i int) consensus.Vote {
		s, r := sessions[i], &reps[i]
		o := &r.run
		e.runHere(rctx, s, &r.job, began, o)
		v := consensus.Vote{Session: int64(o.SessionID), Label: consensus.Label(o.Label), Confidence: o.Confidence, Latency: o.latency, Reason: o.Error}
		if o.answered() && job.Kind == KindDelegate {
			v.Answer = o.output
		}
		counts, failed := o.health(ctx)
		if r.slot.CompareAndSwap(nil, o) {
			e.note(s, counts, failed, v.Reason)
		}
		return v
	})
	cutReason := func(i int) string { // of a replica the runner cut short
		if out.Verdicts[i] == consensus.LabelTimeout {
			return fmt.Sprintf("no answer within %v", budget)
		}
		return out.Votes[i].Reason
	}
	call := &consensusCall{outcomes: make([]*outcome, n)}
	for i := range reps {
		slot := &reps[i].slot
		if slot.Load() == nil {
			a := newOutcome(sessions[i], job, ids[i])
			a.Replica, a.short = i, short
			if slot.CompareAndSwap(nil, a) {
				a.latency = e.now().Sub(start)
				e.abandoned(ctx, sessions[i], a, Label(out.Verdicts[i]), cutReason(i))
			}
		}
		call.outcomes[i] = slot.Load()
	}
	failHard := errors.Is(err, consensus.ErrDisagreement) || errors.Is(err, consensus.ErrAllFailed)
	if err != nil && !failHard {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		return nil, problem.Newf(http.StatusInternalServerError, problem.CodeInternal, "aggregating the replicas: %v", err)
	}

	// The runner relabels a replica that returned no answer after the
	// outcome was decided or the call's deadline passed (an answer keeps
	// its label); the runs follow it.
	call.runs = make([]Run, n)
	for i, o := range call.outcomes {
		if l := Label(out.Verdicts[i]); l != o.Label {
			o.Label, o.Error, o.result, o.output = l, cutReason(i), nil, nil
			o.Confidence, o.Reasons, o.Output = 0, nil, nil
		}
		call.runs[i] = o.Run
	}
	verdicts := make([]Label, len(out.Verdicts))
	for i, l := range out.Verdicts {
		verdicts[i] = Label(l)
	}
	call.block = ConsensusResponse{
		Replicas:      out.Replicas,
		Agreement:     out.Agreement,
		Verdicts:      verdicts,
		Strategy:      AggregationMajority,
		Confidence:    out.Confidence,
		LowConfidence: out.LowConfidence,
	}
	if out.Winner >= 0 {
		call.winner = call.outcomes[out.Winner]
	}
	e.weigh(call, out, e.answerKey, rel)
	e.learn(ctx, scope, out, runner.Policy, rel)

	switch {
	case errors.Is(err, consensus.ErrDisagreement):
		p := problem.Newf(http.StatusConflict, problem.CodeDisagreement,
			"replicas disagree and consensus.disagreement_policy is fail_hard (verdicts %v)", verdicts)
		p.Extra = call.evidence()
		return nil, p
	case call.winner == nil && policy != DisagreeReturnAll:
		return nil, e.noWinner(call, out)
	case policy == DisagreeReturnAll && call.winner != nil && !strictMajority(out, e.failures):
		call.winner = nil // return_all names a winner only when a majority agrees
	}
	return call, nil
}

// abandoned records o, the run of a replica the runner abandoned because
// its worker ignored its cancelled context, as labelled l for reason: it
// warns, and counts a TIMEOUT while the caller was still waiting as a
// failure of the session.
func (e *Engine) abandoned(caller context.Context, s *session, o *outcome, l Label, reason string) {
	o.Label, o.Error, o.LatencyMS = l, reason, o.latency.Milliseconds()
	e.log.Warn("router: worker ignored its cancelled context; abandoning it",
		"session_id", s.ID, "task_id", o.TaskID, "grace", e.stopGrace)
	counts, failed := o.health(caller)
	e.note(s, counts, failed, reason)
}

// strictMajority reports whether the winning group holds more than half
// of the votes: of the answers, and of the failed replicas too when
// failures count as negative evidence. Cancelled replicas never count.
func strictMajority(out consensus.Outcome, failures consensus.FailureMode) bool {
	votes := 0
	for _, l := range out.Verdicts {
		switch {
		case l == consensus.LabelCancelled:
		case l.Failed() && failures != consensus.FailuresNegative:
		default:
			votes++
		}
	}
	return 2*out.Agreeing > votes
}

// noWinner is the error of a best_effort or fail_hard call where no
// replica won: 504 (code timeout) when every replica that failed timed
// out and none answered, 502 (code all_replicas_failed) when no replica
// answered, and 409 (code disagreement) when failures, counted as
// negative evidence, outweigh the answers.
func (e *Engine) noWinner(call *consensusCall, out consensus.Outcome) *Error {
	var answered, timeouts, errs int
	for _, o := range call.outcomes {
		switch {
		case o.answered():
			answered++
		case o.Label == LabelTimeout:
			timeouts++
		case o.Label == LabelError:
			errs++
		}
	}
	var p *Error
	switch {
	case answered > 0:
		p = problem.Newf(http.StatusConflict, problem.CodeDisagreement,
			"failed replicas outweigh the answers (verdicts %v)", call.block.Verdicts)
	case timeouts > 0 && errs == 0:
		p = problem.Newf(http.StatusGatewayTimeout, problem.CodeTimeout,
			"no replica answered in time (verdicts %v)", call.block.Verdicts)
	default:
		p = problem.Newf(http.StatusBadGateway, problem.CodeAllReplicasFailed,
			"no replica answered (verdicts %v)", call.block.Verdicts)
	}
	p.Detail += failureCauses(call.outcomes)
	p.Extra = call.evidence()
	return p
}

// failureCauses lists, after ": ", the distinct reasons the replicas that
// did not answer gave, each with the sessions that gave it, so that a
// host reads a worker's fault in the problem's detail ("session 2:
// worker returned no verdict") and not only in its evidence.
func failureCauses(outcomes []*outcome) string {
	var causes []string
	sessions := map[string][]SessionID{}
	for _, o := range outcomes {
		if o.answered() || o.Error == "" {
			continue
		}
		if _, seen := sessions[o.Error]; !seen {
			causes = append(causes, o.Error)
		}
		sessions[o.Error] = append(sessions[o.Error], o.SessionID)
	}
	if len(causes) == 0 {
		return ""
	}
	parts := make([]string, len(causes))
	for i, c := range causes {
		ids := sessions[c]
		word := "session"
		if len(ids) > 1 {
			word = "sessions"
		}
		parts[i] = fmt.Sprintf("%s %s: %s", word, strings.Trim(fmt.Sprint(ids), "[]"), c)
	}
	return ": " + strings.Join(parts, "; ")
}

// DelegateV3 runs the workflow on consensus.replicas sessions at once and
// returns the majority's output. Outputs agree under the engine's answer
// key ([WithAnswerKey]; by default equal canonical JSON, strings compared
// with white space trimmed and folded). Result is the output of the first
// run of the winning group, and evidence its steps, tools and
// configuration, plus evidence.runs with every replica's run. Selection,
// policies and errors are those of [Engine.ValidateV3].
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
		resp.Evidence.Steps, resp.Evidence.Tools = orEmpty(w.Steps), orEmpty(w.Tools)
		resp.Evidence.Configuration = *w.Configuration
	}
	return resp, nil
}

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
// [Engine.Rank]: most reliable first, sessions at their share bound last,
// the least used first one call in [DefaultExploreEvery]), equals rotated
// by one place per version 3 call; with reputation off they are only
// rotated, so that load spreads over them. The engine then takes
// sessions in that order, first only from worker pools not yet used, then
// from any pool, until it has consensus.replicas distinct sessions. A
// session never runs two replicas of one call.
//
// Unknown ids in session_id or consensus.session_pool are a 400 *Error
// naming the field ("consensus.session_pool[2]"). Too few fit sessions
// give a 503 *Error with code insufficient_sessions, and no replica runs.
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

// v3Pool is the JSON path of the session pool of a version 3 request.
const v3Pool = "consensus.session_pool"

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
