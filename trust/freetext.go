package trust

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/router"
)

// Agreement is how a delegation's answers agree (delegation.agreement).
type Agreement string

// The agreements of a delegation.
const (
	// AgreementExact, the default, counts two outputs as agreeing when
	// they are equal under the service's answer key ([WithAnswerKey],
	// by default canonical JSON with the white space of strings folded),
	// or, with [WithGrouper], when the grouper puts them together.
	AgreementExact Agreement = "exact"
	// AgreementJudged has the panel judge the answer rather than repeat
	// it: one session produces a candidate answer, other sessions
	// validate it, and the call returns the answer the judges accept,
	// with the validation's confidence. Free text that no two models
	// word alike settles this way.
	AgreementJudged Agreement = "judged"
)

// DelegationOptions are the options of a delegation (the request's
// delegation member).
type DelegationOptions struct {
	// Agreement is exact (the default when empty) or judged.
	Agreement Agreement `json:"agreement,omitempty" validate:"omitempty,oneof=exact judged"`
}

func (o *DelegationOptions) judged() bool { return o != nil && o.Agreement == AgreementJudged }

// maxCandidates bounds the candidate answers of a judged delegation: a
// second is produced only when the judges reject the first.
const maxCandidates = 2

// Judging is the record of a judged delegation: the candidate answers in
// the order they were produced, which run produced each and which runs
// judged it. Run numbers index evidence.verdicts.
type Judging struct {
	// Candidates are the answers produced, at most 2.
	Candidates []Candidate `json:"candidates"`
}

// Candidate is one answer of a judged delegation and its judgement.
type Candidate struct {
	// Run is the index of the run that produced it.
	Run int `json:"run"`
	// SessionID is the session that produced it; it never judges it.
	SessionID router.SessionID `json:"session_id"`
	// TaskID is the producing run's task id.
	TaskID string `json:"task_id,omitempty"`
	// Label is the producing run's label: OK, or ERROR or TIMEOUT when it
	// produced nothing (and nothing was judged).
	Label router.Label `json:"label"`
	// Output is the answer; null when none was produced.
	Output json.RawMessage `json:"output"`
	// Judges are the runs that judged it, in order.
	Judges []Judge `json:"judges"`
	// Verdict is the judges' verdict as a validation would answer it:
	// VALID (accepted), INVALID (rejected), RETRY (not settled) or
	// NEEDS_SPEC; empty when nothing was judged.
	Verdict Status `json:"verdict,omitempty"`
	// Confidence is the validation's confidence in its verdict.
	Confidence float64 `json:"confidence"`
}

// Judge is one run that judged a candidate.
type Judge struct {
	// Run is the run's index in evidence.verdicts.
	Run int `json:"run"`
	// SessionID is the session it ran on.
	SessionID router.SessionID `json:"session_id"`
	// TaskID is its task id.
	TaskID string `json:"task_id,omitempty"`
	// Label is its verdict, or TIMEOUT, ERROR or CANCELLED.
	Label router.Label `json:"label"`
	// Reason is its first reason or error, if any.
	Reason string `json:"reason,omitempty"`
}

// judgement is a candidate as judged: the validation request that judged
// it, its steps, its tally and its response.
type judgement struct {
	vreq   *Request
	steps  []stepResult
	final  stepResult
	resp   *Response
	offset int // the index of its first judging run among every run
	output json.RawMessage
}

// judged runs a judged delegation (delegation.agreement "judged"):
//
//  1. one run of the delegation produces a candidate answer, on the
//     first candidate session (adaptive's, see Service.candidates) that
//     has produced none, at the tier's first router tier;
//  2. the candidate is validated, as a validation call of the same tier
//     whose claimed result is the candidate, on the sessions that
//     produced no candidate: fast, safe and oracle in one router call of
//     1, 3 or 5 replicas on those sessions, adaptive as Service.adaptive
//     validates (one judge per router call) until consensus.Stop settles
//     it;
//  3. accepted (VALID), it is the answer; rejected (INVALID), a second
//     candidate is produced and judged likewise; unsettled, the call
//     answers RETRY with the candidate as its best effort. Judges that
//     all failed, or ran out of the caller's time, did not settle it:
//     their runs count as ERROR or TIMEOUT, and the call answers RETRY
//     with the candidate.
//
// Like adaptive, it launches no producer after the first within
// callerReserve of the caller's deadline, where a run could only time
// out, and when no run answered by the deadline it fails with a 504,
// code timeout (noVoteInTime), rather than answer from no vote. A caller
// that cancels ends it with the context's error, whenever it leaves.
//
// It returns the decision: the response, the tally the receipt records
// (the last judgement's) and every step.
func (s *Service) judged(ctx context.Context, req *Request, traceID string) (decision, error) {
	cands := s.candidates(ctx)
	tier := plan(req.Policy).tier
	if req.Policy == PolicyAdaptive {
		tier = adaptiveTier(0)
	} else if judges := plan(req.Policy).replicas; len(cands) < 1+judges {
		// Refused before the producer runs: a 503 after it would be
		// retried, and each retry would run it again.
		return decision{}, problem.Invalid([]problem.FieldError{{Field: "policy", Rule: "servable",
			Message: fmt.Sprintf("a judged delegation at %s runs one producer and %d judges, each on a session of its own, and the service knows %d sessions (WithSessionPool, or a router that reports its sessions)",
				req.Policy, judges, len(cands))}})
	}
	var (
		steps     []stepResult
		runs      []router.Run // every run, renumbered in order
		producers []router.SessionID
		judging   = &Judging{Candidates: []Candidate{}}
		last      *judgement
	)
	add := func(st stepResult) {
		steps = append(steps, st)
		if st.step.Check { // a leader's check: counted in no verdict
			return
		}
		for i := range st.runs {
			st.runs[i].Replica = len(runs)
			runs = append(runs, st.runs[i])
		}
	}
	for range maxCandidates {
		if len(steps) > 0 && (outOfTime(ctx) || cancelled(ctx) != nil) {
			break // as adaptive: a run launched now could only TIMEOUT (or the caller left)
		}
		id, ok := nextProducer(cands, producers)
		if !ok || len(producers) > 0 && !judgeable(req.Policy, cands, producers) {
			break // no session left to produce, or to judge what it would
		}
		st, err := s.runOn(ctx, req, rung{tier, 1, router.DisagreeBestEffort}, id)
		if st, err = oneRun(ctx, req.Mode, st, err, id, tier); err != nil {
			return decision{}, err
		}
		add(st)
		p := runs[len(runs)-1]
		producers = append(producers, p.SessionID)
		if id != 0 && id != p.SessionID {
			producers = append(producers, id)
		}
		c := Candidate{Run: p.Replica, SessionID: p.SessionID, TaskID: p.TaskID, Label: p.Label, Output: json.RawMessage("null"), Judges: []Judge{}}
		out := json.RawMessage(p.Output)
		if p.Label != router.LabelOK || len(out) == 0 || string(out) == "null" {
			judging.Candidates = append(judging.Candidates, c)
			continue
		}
		c.Output = out
		j, err := s.judge(ctx, req, out, producers, cands, traceID)
		if err != nil {
			return decision{}, err
		}
		j.offset = len(runs)
		for _, st := range j.steps {
			add(st)
		}
		for _, r := range j.final.runs {
			reason := r.Error
			if reason == "" && len(r.Reasons) > 0 {
				reason = r.Reasons[0]
			}
			c.Judges = append(c.Judges, Judge{Run: j.offset + r.Replica, SessionID: r.SessionID, TaskID: r.TaskID, Label: r.Label, Reason: reason})
		}
		c.Verdict, c.Confidence = j.resp.Status, j.resp.Confidence
		judging.Candidates = append(judging.Candidates, c)
		last = j
		if c.Verdict != StatusInvalid {
			break
		}
	}
	if len(steps) == 0 {
		return decision{}, problem.New(http.StatusServiceUnavailable, problem.CodeInsufficientSessions,
			"trust: a judged delegation found no session to produce an answer")
	}
	if err := cancelled(ctx); err != nil { // the caller left: no answer
		return decision{}, err
	}
	if last == nil && outOfTime(ctx) && !answeredAny(runs) {
		return decision{}, noVoteInTime(runs)
	}
	if last == nil { // nothing was produced: the produce runs' own tally
		final, err := s.tally(ctx, req, steps, s.readScope(ctx, req, nil, nil))
		if err != nil {
			return decision{}, err
		}
		resp := s.respond(req, steps, final, traceID)
		resp.Evidence.Judging = judging
		return decision{resp: resp, final: final, steps: steps, at: s.now()}, nil
	}
	at := s.now()
	s.learn(ctx, last.vreq, last.final, last.steps, traceID, nil, at) // a validation: no open answer
	return decision{resp: s.judgedResponse(req, steps, runs, judging, last), final: last.final, steps: steps, at: at}, nil
}

// nextProducer returns the first candidate session that has produced no
// answer yet, or the zero id (the router picks) when no session is known;
// false when every known session has produced one.
func nextProducer(cands []candidate, producers []router.SessionID) (router.SessionID, bool) {
	if cands == nil {
		return 0, true
	}
	for _, c := range cands {
		if !slices.Contains(producers, c.id) {
			return c.id, true
		}
	}
	return 0, false
}

// judgeable reports whether, once one more candidate is produced, the
// sessions that produced none still number the judges the policy runs:
// adaptive judges on whatever sessions remain.
func judgeable(p Policy, cands []candidate, producers []router.SessionID) bool {
	if p == PolicyAdaptive {
		return true
	}
	left := 0
	for _, c := range cands {
		if !slices.Contains(producers, c.id) {
			left++
		}
	}
	return left-1 >= plan(p).replicas
}

// judge validates the candidate output of req on sessions other than
// the producers'.
func (s *Service) judge(ctx context.Context, req *Request, output json.RawMessage, producers []router.SessionID, cands []candidate, traceID string) (*judgement, error) {
	vreq := &Request{
		Mode: ModeValidation, Policy: req.Policy, Context: req.Context, Metadata: req.Metadata,
		Task: Task{Type: req.Task.Type, Input: req.Task.Input, Spec: req.Task.Spec, ClaimedResult: output},
	}
	j := &judgement{vreq: vreq, output: output}
	var cals *scopeReading
	if req.Policy == PolicyAdaptive {
		var err error
		if j.steps, cals, err = s.adaptive(ctx, vreq, producers...); err != nil {
			return nil, err
		}
	} else {
		cals = s.readScope(ctx, vreq, nil, nil)
		r := plan(req.Policy)
		var pool []router.SessionID
		for _, c := range cands {
			if !slices.Contains(producers, c.id) {
				pool = append(pool, c.id)
			}
		}
		if len(pool) < r.replicas {
			return nil, problem.Newf(http.StatusServiceUnavailable, problem.CodeInsufficientSessions,
				"trust: a judged delegation at %s needs %d sessions besides the producers' to judge, and knows %d (WithSessionPool, or a router that reports its sessions)",
				req.Policy, r.replicas, len(pool))
		}
		st, err := s.runPool(ctx, vreq, r, pool)
		if err != nil {
			if st, err = failedJudges(ctx, err, r); err != nil {
				return nil, err
			}
		}
		j.steps = []stepResult{st}
	}
	var err error
	if j.final, err = s.tally(ctx, vreq, j.steps, cals); err != nil {
		return nil, err
	}
	j.resp = s.respond(vreq, j.steps, j.final, traceID)
	return j, nil
}

// failedJudges is the step of a router call of judges that failed with
// err: when no judge answered, each failing (a 502, code
// all_replicas_failed) or running out of the caller's time (a 504, code
// timeout, at the caller's deadline), and the error holds their runs,
// those runs as a judgement that did not settle, whose runs, not the
// step, hold their errors (a step's error is a fail_hard disagreement's);
// otherwise err, the caller's cancellation or that of evidence that does
// not decode (see problemEvidence), which ends the call.
func failedJudges(ctx context.Context, err error, r rung) (stepResult, error) {
	if cerr := cancelled(ctx); cerr != nil {
		return stepResult{}, cerr
	}
	var perr *problem.Details
	if !errors.As(err, &perr) {
		return stepResult{}, err
	}
	switch {
	case perr.Code == problem.CodeAllReplicasFailed:
	case perr.Code == problem.CodeTimeout && outOfTime(ctx):
	default:
		return stepResult{}, err
	}
	st, eerr := evidenceStep(perr, "/api/v3/validate", r)
	if eerr == nil && len(st.runs) == 0 {
		eerr = err
	}
	return st, eerr
}

// judgedResponse is the delegation's response from its last judgement:
//
//	judges     status      result             confidence
//	VALID      VALID       the candidate      the validation's
//	INVALID    RETRY       null               0
//	RETRY      RETRY       the candidate      the validation's
//	NEEDS_SPEC NEEDS_SPEC  null               the validation's
//
// Its evidence counts every run, producers and judges, but a leader's
// check (Step.Check), which it shows as a step and in Checked; its
// agreement, its calibration, leader and dissent (when the confidence
// is the validation's) and its disagreements are the last judgement's,
// the disagreements numbered among every run.
func (s *Service) judgedResponse(req *Request, steps []stepResult, runs []router.Run, judging *Judging, last *judgement) *Response {
	v := last.resp
	resp := &Response{
		Status: v.Status, Result: last.output, Confidence: v.Confidence,
		RetryInstructions: v.RetryInstructions, TraceID: v.TraceID, ServiceVersion: Version,
		Evidence: Evidence{
			Agreement: v.Evidence.Agreement, Verdicts: make([]router.Label, len(runs)),
			Disagreements: make([]Disagreement, len(v.Evidence.Disagreements)),
			Redundancy:    len(runs), Launched: len(runs), Usage: router.TotalUsage(runs), Judging: judging,
			Calibration: v.Evidence.Calibration, Leader: v.Evidence.Leader, Dissent: v.Evidence.Dissent, Lone: v.Evidence.Lone,
		},
	}
	for _, st := range steps {
		resp.Evidence.Steps = append(resp.Evidence.Steps, st.step)
		if st.step.Check {
			resp.Evidence.Checked += len(st.runs)
		}
	}
	for i, r := range runs {
		resp.Evidence.Verdicts[i] = r.Label
		switch {
		case r.Label == router.LabelCancelled:
			resp.Evidence.Cancelled++
		case r.Label == router.LabelError || r.Label == router.LabelTimeout:
			resp.Evidence.Failed++
		case r.Label != "":
			resp.Evidence.Answered++
		}
	}
	for i, d := range v.Evidence.Disagreements {
		d.Replica += last.offset
		resp.Evidence.Disagreements[i] = d
	}
	switch v.Status {
	case StatusInvalid:
		resp.Status, resp.Result, resp.Confidence = StatusRetry, json.RawMessage("null"), 0
		resp.Evidence.Calibration = nil // 0 is read on no map
		resp.Evidence.Leader, resp.Evidence.Dissent, resp.Evidence.Lone = nil, nil, nil
		resp.RetryInstructions = &RetryInstructions{Policy: stronger(req.Policy),
			Reason: fmt.Sprintf("the judges rejected every candidate answer (%d of %d produced)", judged(judging), len(judging.Candidates))}
	case StatusNeedsSpec:
		resp.Result = json.RawMessage("null")
	case StatusRetry:
		if ri := resp.RetryInstructions; ri != nil {
			c := *ri
			c.Reason = "the judges did not settle on the candidate answer: " + c.Reason
			resp.RetryInstructions = &c
		}
	}
	return resp
}

// judged counts the candidates that were judged.
func judged(j *Judging) int {
	n := 0
	for _, c := range j.Candidates {
		if c.Verdict != "" {
			n++
		}
	}
	return n
}

// reasons describes each candidate in one line, for a receipt: who
// produced it, who judged it, and the verdict.
func (j *Judging) reasons() []string {
	var out []string
	for i, c := range j.Candidates {
		line := fmt.Sprintf("judged delegation: candidate %d produced by run %d on session %d", i+1, c.Run, c.SessionID)
		if c.TaskID != "" {
			line += " (task " + c.TaskID + ")"
		}
		if c.Verdict == "" {
			out = append(out, line+": "+string(c.Label)+", not judged")
			continue
		}
		var judges []string
		for _, jd := range c.Judges {
			judges = append(judges, fmt.Sprintf("run %d on session %d: %s", jd.Run, jd.SessionID, jd.Label))
		}
		out = append(out, fmt.Sprintf("%s; judged by %s; verdict %s", line, strings.Join(judges, ", "), c.Verdict))
	}
	return out
}

// A Grouper groups the outputs of one delegation by meaning, for
// [WithGrouper]; router/embedkey's Grouper is one, on an embeddings
// endpoint. outputs holds one JSON value per run, in run order, nil for a
// run that gave none. Group must be safe for concurrent use. An error
// ends the trust call with 500 (code internal), or with 504 (code
// timeout) when the caller's deadline passed before Group returned; a
// cancelled call returns context.Canceled.
type Grouper interface {
	Group(ctx context.Context, outputs []json.RawMessage) (*consensus.Grouping, error)
}

// WithGrouper makes delegation outputs agree when g puts them in one
// group, in place of the answer key ([WithAnswerKey]): paraphrases of one
// answer then count as one answer. The trust service regroups every run
// of a call (the router's own count, under its answer key, is replaced),
// once per adaptive batch and once for the tally, and the response's
// evidence.grouping records the grouping. nil, the default, keeps the
// answer key. A judged delegation (delegation.agreement "judged") does not
// group: its judges decide.
//
// A router that keeps reputation would learn a fast, safe or oracle call
// by its own answer key (router.WithAnswerKey), in which paraphrases
// disagree: the service makes such calls under router.WithoutLearning and
// teaches the book the votes as the grouping counted them, as it teaches
// adaptive's pooled votes.
func WithGrouper(g Grouper) Option {
	return func(s *Service) error { s.grouper = g; return nil }
}

// groups reports whether the service groups the outputs of req by
// meaning (WithGrouper): a delegation whose answer is neither numeric nor
// judged.
func (s *Service) groups(req *Request) bool {
	return s.grouper != nil && req.Mode == ModeDelegation && !req.numeric() && !req.Delegation.judged()
}

// answerKey returns the answer key of a call over runs and, when the
// service groups a delegation's outputs (WithGrouper), their grouping. A
// numeric delegation is never grouped: its answers agree within its
// tolerance. The runs have run, so a grouper's failure is an error a
// client does not retry: 500, or 504 when the caller's deadline came
// first.
func (s *Service) answerKey(ctx context.Context, req *Request, runs []router.Run) (func(any) (string, error), *consensus.Grouping, error) {
	if !s.groups(req) {
		return s.key, nil, nil
	}
	outputs := make([]json.RawMessage, len(runs))
	for i, r := range runs {
		if r.Label == router.LabelOK {
			outputs[i] = json.RawMessage(r.Output)
		}
	}
	g, err := s.grouper.Group(ctx, outputs)
	switch {
	case err == nil:
		return g.Key, g, nil
	case errors.Is(ctx.Err(), context.Canceled):
		return nil, nil, ctx.Err()
	case ctx.Err() != nil:
		// 504 timeout, which a client does not retry either.
		return nil, nil, problem.Newf(http.StatusGatewayTimeout, problem.CodeTimeout,
			"trust: grouping the answers by meaning did not finish before the caller's deadline: %v", err)
	default:
		// 500, not a 502 a client would retry: the runs ran, and a retry
		// would run them again.
		return nil, nil, problem.Newf(http.StatusInternalServerError, problem.CodeInternal, "trust: grouping the answers by meaning: %v", err)
	}
}
