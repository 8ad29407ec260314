package router

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/problem"
)

// callerReserve bounds the time kept, before the caller's deadline, to
// aggregate the votes and answer: a tenth of the time left, at most
// callerReserve.
const callerReserve = 100 * time.Millisecond

// callerBudget returns the time the runner waits for votes and then for
// cancelled workers to return: budget and grace, unless ctx has a
// deadline that comes first. Then the two together end callerReserve (or
// a tenth of the time left) before it, grace at most a tenth of what
// remains, so that the call answers from the votes in, the runs still
// out TIMEOUT, before the caller gives up, even when a worker ignores its
// context; callerBound is then true.
func callerBudget(ctx context.Context, budget, grace time.Duration) (time.Duration, time.Duration, bool) {
	deadline, ok := ctx.Deadline()
	if !ok {
		return budget, grace, false
	}
	left := time.Until(deadline)
	avail := left - min(left/10, callerReserve)
	if budget+grace <= avail {
		return budget, grace, false
	}
	if avail <= 0 {
		return time.Nanosecond, 0, true // no time: every run TIMEOUT at once
	}
	grace = min(grace, avail/10) // a worker that heeds its context returns well within it
	return min(budget, avail-grace), grace, true
}

// replicasField is the JSON path of the replica count of the request
// whose session pool is at poolField: consensus.replicas in version 3,
// policy.redundancy in a version 1 fact check and in a version 2
// validation (whose poolField is "", as it has no pool).
func replicasField(poolField string) string {
	if poolField == v3Pool {
		return "consensus.replicas"
	}
	return "policy.redundancy"
}

// fanOut runs job on c.Replicas sessions picked as documented on
// [Engine.ValidateV3], aggregates their votes and applies the
// disagreement policy. poolField is the JSON path of c.SessionPool in the
// request, for errors. It returns the call with an error too once the
// replicas ran (its outcomes, for the telemetry), and no call when it
// refused the request before any ran.
func (e *Engine) fanOut(ctx context.Context, first SessionID, c *ConsensusRequest, poolField string, tier Tier, job *Job, timeout time.Duration) (*consensusCall, error) {
	scope := scopeFor(ctx, job)
	sessions, read, err := e.pick(ctx, first, c.SessionPool, poolField, tier, c.Replicas, scope, callNeeds(ctx, c, job))
	if err != nil {
		return nil, err
	}
	rel := read.Reliabilities
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
	budget, grace, callerBound := callerBudget(ctx, min(timeout, e.callTimeout), e.stopGrace)
	runner := consensus.Runner{
		Aggregator: agg,
		Policy: consensus.Policy{
			Disagreement: consensus.DisagreementPolicy(policy),
			Failures:     e.failures,
			Key:          e.answerKey,
		},
		Timeout: budget,
		Abandon: true,
		Grace:   grace,
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
	short := timeout < e.replicaTimeout || callerBound // the caller's own bound
	for i := range reps {
		j := &reps[i].job
		*j = *job
		j.SessionID, j.TaskID, j.Replica = sessions[i].ID, ids[i], i
		reps[i].run.short = short
	}
	began, start := time.Now(), e.now()
	e.tel.launch(ctx, job, n)
	out, err := runner.Run(ctx, n, func(rctx context.Context, i int) consensus.Vote {
		s, r := sessions[i], &reps[i]
		o := &r.run
		e.runHere(rctx, s, &r.job, began, budget, o)
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

	// The runner relabels a replica that returned no answer after the
	// outcome was decided, the call's deadline passed or the caller left
	// (an answer keeps its label); the runs follow it.
	call.runs = make([]Run, n)
	for i, o := range call.outcomes {
		if i >= len(out.Verdicts) { // the votes could not be aggregated
			break
		}
		if l := Label(out.Verdicts[i]); l != o.Label {
			o.Label, o.Error, o.result, o.output = l, cutReason(i), nil, nil
			o.Confidence, o.Reasons, o.Output = 0, nil, nil
		}
		call.runs[i] = o.Run
	}
	failHard := errors.Is(err, consensus.ErrDisagreement) || errors.Is(err, consensus.ErrAllFailed)
	if err != nil && !failHard {
		if ctx.Err() != nil {
			return call, ctx.Err()
		}
		return call, problem.Newf(http.StatusInternalServerError, problem.CodeInternal, "aggregating the replicas: %v", err)
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
	if e.failures == consensus.FailuresNegative {
		call.block.Failures = e.failures
	}
	if out.Winner >= 0 {
		call.winner = call.outcomes[out.Winner]
	}
	e.weigh(call, out, e.answerKey, rel)
	numericBlock(call, out)
	// return_all names a winner only when a majority agrees: a call
	// answered without one teaches its agreement, but is not remembered
	// for a report on a verdict it never gave.
	noVerdict := policy == DisagreeReturnAll && call.winner != nil && !strictMajority(out, e.failures)
	basis := e.calibrate(ctx, call, scope, out, read.Calibration)
	e.learn(ctx, scope, out, learningPolicy(runner.Policy, out), rel, basis, read.Coincidence, !noVerdict)

	switch {
	case errors.Is(err, consensus.ErrDisagreement):
		p := problem.Newf(http.StatusConflict, problem.CodeDisagreement,
			"replicas disagree and consensus.disagreement_policy is fail_hard (verdicts %v)", verdicts)
		p.Extra = call.evidence()
		return call, p
	case call.winner == nil && policy != DisagreeReturnAll:
		return call, e.noWinner(call, out)
	case noVerdict:
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
	case answered > 0 && call.block.Tolerance != nil:
		p = problem.Newf(http.StatusConflict, problem.CodeDisagreement,
			"no output is a number that agrees with the aggregate, or failed replicas outweigh those that do (verdicts %v)", call.block.Verdicts)
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
