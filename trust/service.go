package trust

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"slices"
	"sync/atomic"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/internal/problem"
	"github.com/vouchkit/vouch/internal/release"
	"github.com/vouchkit/vouch/internal/traceparent"
	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
)

// Version is the release of the trust service, reported as
// service_version: the release of the vouch module.
const Version = release.Version

// DefaultEscalationThreshold is the default of [WithEscalationThreshold]:
// 0, so that by default a single run never settles an adaptive call. A
// worker's own confidence is seldom calibrated; docs/ACCURACY.md measures
// what trusting it costs in accuracy and saves in runs.
const DefaultEscalationThreshold = 0.0

// Caller is anything that answers trust calls: the in-process [Service]
// and the remote [Client]. [NewHandler] serves any Caller.
type Caller interface {
	Call(ctx context.Context, req *Request) (*Response, error)
}

// Error is the error of a trust call: an RFC 9457 problem with HTTP status,
// machine code and field errors. It is the same type as router.Error.
type Error = problem.Details

// Service answers trust calls by running router calls on a router.Service:
// the in-process router.Engine or a remote router.Client. It is safe for
// concurrent use. Build it with [New].
type Service struct {
	router    router.Service
	variant   router.Variant
	session   router.SessionID
	pool      []router.SessionID
	threshold float64
	key       func(answer any) (string, error)
	logger    *slog.Logger
	issuer    *receipt.Issuer
	signed    bool
	next      atomic.Uint64      // rotates adaptive's candidate sessions
	tel       *serviceTelemetry  // spans and metrics (WithTelemetry)
	noRep     bool               // WithoutReputation
	keep      keeper             // the router's reputation; nil when off
	calls     *reputation.Ledger // the latest calls by trace id, for Feedback
}

// Option configures a [Service].
type Option func(*Service) error

// WithVariant makes every router call use variant v (normal, trial or
// x402). It matters only for a remote router.Client; the default is the
// client's own.
func WithVariant(v router.Variant) Option {
	return func(s *Service) error {
		switch v {
		case "", router.VariantNormal, router.VariantTrial, router.VariantX402:
			s.variant = v
			return nil
		}
		return fmt.Errorf("trust: unknown router variant %q", v)
	}
}

// WithSingleSession makes the fast tier call the version 2 endpoints on
// session id instead of version 3 with one replica; adaptive runs first on
// that session, through the version 2 endpoint too.
func WithSingleSession(id router.SessionID) Option {
	return func(s *Service) error {
		if id <= 0 {
			return fmt.Errorf("trust: single session id must be positive, got %d", id)
		}
		s.session = id
		return nil
	}
}

// WithSessionPool sets consensus.session_pool of the version 3 calls of
// fast, safe and oracle, and the sessions adaptive runs on. Without it the
// router draws from every session that serves the tier, and adaptive asks
// the router for its sessions (router.StatusReporter: in-process for the
// router.Engine, one GET /api/v1/status per call for a router.Client).
func WithSessionPool(ids ...router.SessionID) Option {
	return func(s *Service) error {
		s.pool = slices.Clone(ids)
		return nil
	}
}

// WithEscalationThreshold sets the confidence a single run of the adaptive
// tier must report to settle the call alone, without a second run
// (consensus.Stop's Lone); a run below it escalates. t must lie in
// [0, 1]; 0, the default ([DefaultEscalationThreshold]), means that a
// single run never settles a call, and adaptive starts with two runs at
// once. With t > 0 it starts with one.
func WithEscalationThreshold(t float64) Option {
	return func(s *Service) error {
		if !(t >= 0 && t <= 1) {
			return fmt.Errorf("trust: escalation threshold must be in [0, 1], got %v", t)
		}
		s.threshold = t
		return nil
	}
}

// WithAnswerKey sets when two delegation outputs agree: when key returns
// the same string for both (consensus.Policy.Key). The key is given each
// output as JSON, a json.RawMessage. nil, the default, means
// consensus.DefaultKey. Use the same key as the router's
// (router.WithAnswerKey) so that both count the same agreement.
func WithAnswerKey(key func(answer any) (string, error)) Option {
	return func(s *Service) error { s.key = key; return nil }
}

// WithReceipts makes the service issue receipts through is when a request
// asks for one. is must have a Store. Without this option a request that
// asks for a receipt is refused with 400 naming receipt.mode.
func WithReceipts(is *receipt.Issuer) Option {
	return func(s *Service) error {
		if is == nil || is.Store == nil {
			return errors.New("trust: WithReceipts needs an Issuer with a Store")
		}
		s.issuer = is
		return nil
	}
}

// WithSignedReceipts makes New fail unless receipts are configured with a
// Signer, so that a service meant to sign cannot start without a key.
func WithSignedReceipts() Option {
	return func(s *Service) error { s.signed = true; return nil }
}

// WithLogger sets the logger; by default the service logs nothing.
func WithLogger(l *slog.Logger) Option {
	return func(s *Service) error { s.logger = l; return nil }
}

// New returns a Service running its router calls on rs.
func New(rs router.Service, opts ...Option) (*Service, error) {
	if rs == nil {
		return nil, errors.New("trust: New needs a router.Service")
	}
	s := &Service{router: rs, threshold: DefaultEscalationThreshold, tel: newServiceTelemetry(nil, nil)}
	for _, o := range opts {
		if err := o(s); err != nil {
			return nil, err
		}
	}
	if s.signed && (s.issuer == nil || s.issuer.Signer == nil) {
		return nil, errors.New("trust: signed receipts asked for, but no Issuer with a Signer is configured (WithReceipts)")
	}
	if s.logger == nil {
		s.logger = slog.New(slog.DiscardHandler)
	}
	s.issuer = s.tel.logged(s.issuer) // WithTelemetry with the no-op providers left s.tel nil: no hooks
	s.useReputation()
	s.calls = reputation.NewLedger(router.DefaultFeedbackMemory)
	return s, nil
}

// Call validates req, runs the router calls its mode and policy need, and
// returns one unified response. A status of RETRY, NEEDS_SPEC or
// INCONCLUSIVE is an answer, not an error. Errors are *Error: 400 for an
// invalid request, or the router's error when no step could run.
func (s *Service) Call(ctx context.Context, req *Request) (*Response, error) {
	if req == nil {
		return nil, problem.New(http.StatusBadRequest, problem.CodeInvalidRequest, "trust: the request is nil")
	}
	if err := req.Validate(); err != nil {
		return nil, err
	}
	if req.Receipt.Requested() && s.issuer == nil {
		return nil, problem.Invalid([]problem.FieldError{{
			Field: "receipt.mode", Rule: "unavailable",
			Message: "this service issues no receipts; omit the receipt block or use mode none",
		}})
	}
	ctx, span := s.tel.startCall(ctx, req) // a recorded span's trace id becomes the call's
	defer span.End()
	traceID := traceparent.From(ctx)
	if !traceparent.Valid(traceID) {
		traceID = traceparent.NewTraceID()
		ctx = traceparent.With(ctx, traceID)
	}
	if s.variant != "" {
		ctx = router.WithVariant(ctx, s.variant)
	}

	var steps []stepResult
	if req.Policy == PolicyAdaptive {
		var err error
		if steps, err = s.adaptive(ctx, req); err != nil {
			return nil, err
		}
	} else {
		var id router.SessionID // fast runs on the single session, if any
		if req.Policy == PolicyFast {
			id = s.session
		}
		st, err := s.runOn(ctx, req, plan(req.Policy), id)
		if err != nil {
			return nil, err
		}
		steps = []stepResult{st}
	}
	final, err := s.tally(req, steps)
	if err != nil {
		return nil, err
	}
	s.learn(ctx, req, final, steps, traceID)
	resp := s.respond(req, steps, final, traceID)
	if req.Receipt.Requested() {
		ictx, ispan := s.tel.startIssue(ctx, req) // the log append, when the store keeps a log, is its child
		issued, err := s.issuer.Issue(ictx, s.receiptParams(ctx, req, resp, final, steps))
		s.tel.issued(ictx, ispan, issued, err)
		if err != nil {
			s.logger.ErrorContext(ctx, "trust: issuing receipt", "trace_id", traceID, "error", err)
			return nil, problem.New(http.StatusServiceUnavailable, problem.CodeUnavailable,
				"the decision was made but its receipt could not be issued; retry the call")
		}
		resp.Receipt = issued.ResponseMember()
		resp.ReceiptClamped = receiptClamps(s.issuer.Environment, req.Receipt, issued.Receipt)
	}
	s.tel.answered(ctx, span, req, resp)
	return resp, nil
}

// stepResult is one router call, normalized across versions and operations.
type stepResult struct {
	step Step
	// Set on the pooled result only (see Service.tally).
	out           consensus.Outcome
	accepted      bool
	disagreements []Disagreement

	verdict    router.Verdict  // validation and arbitration
	result     json.RawMessage // delegation
	confidence float64
	agreement  float64
	verdicts   []router.Label
	runs       []router.Run
	reasons    []string
	consensus  *router.ConsensusResponse
}

// runOn makes the router call of one rung: on session id alone when id is
// set, else on the service's pool. A one-replica rung on the single
// session (WithSingleSession) calls version 2.
func (s *Service) runOn(ctx context.Context, req *Request, r rung, id router.SessionID) (stepResult, error) {
	ctx, span := s.tel.startStep(ctx, r.replicas, r.tier)
	defer span.End()
	if r.replicas == 1 && s.session != 0 && id == s.session {
		return s.runV2(ctx, req, r)
	}
	pool := s.pool
	if id != 0 {
		pool = []router.SessionID{id}
	}
	cons := router.ConsensusRequest{
		Replicas:           r.replicas,
		SessionPool:        pool,
		Aggregation:        router.AggregationMajority,
		DisagreementPolicy: r.policy,
	}
	if s.keep != nil {
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
		run := router.Run{SessionID: resp.SessionID, TaskID: resp.TaskID, Label: router.LabelOK, Output: resp.Result}
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
// keeping the per-replica evidence the error carries; any other error ends
// the call.
func failedStep(err error, route string, r rung) (stepResult, error) {
	var perr *problem.Details
	if !errors.As(err, &perr) || perr.Code != problem.CodeDisagreement {
		return stepResult{}, err
	}
	var extra struct {
		Runs      []router.Run             `json:"runs"`
		Consensus router.ConsensusResponse `json:"consensus"`
	}
	_ = json.Unmarshal(perr.Extra, &extra) // evidence is best kept, not required
	st := stepResult{
		agreement: extra.Consensus.Agreement, confidence: extra.Consensus.Confidence,
		verdicts: extra.Consensus.Verdicts, runs: extra.Runs, consensus: &extra.Consensus,
	}
	st.step = newStep(route, r, "", "", st)
	st.step.Error = perr.Detail
	return st, nil
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
	if t.Type != "" {
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
	if claimType == "" {
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

// respond builds the response from final, the pooled vote accounting of
// every step.
func (s *Service) respond(req *Request, steps []stepResult, final stepResult, traceID string) *Response {
	resp := &Response{
		Confidence:     final.confidence,
		TraceID:        traceID,
		ServiceVersion: Version,
		Result:         json.RawMessage("null"),
		Evidence: Evidence{
			Agreement:     final.agreement,
			Verdicts:      final.verdicts,
			Disagreements: final.disagreements,
			Launched:      final.out.Replicas,
			Answered:      final.out.Answered,
			Cancelled:     final.out.Cancelled,
			Failed:        final.out.Failed,
		},
	}
	for _, st := range steps {
		resp.Evidence.Steps = append(resp.Evidence.Steps, st.step)
	}
	resp.Evidence.Redundancy = final.out.Replicas
	resp.Evidence.Usage = router.TotalUsage(final.runs)
	ok := final.accepted
	switch req.Mode {
	case ModeDelegation:
		if len(final.result) > 0 {
			resp.Result = final.result
		}
		resp.Status = StatusRetry
		if ok && len(final.result) > 0 && string(final.result) != "null" {
			resp.Status = StatusValid
		}
	case ModeValidation:
		resp.Result = req.Task.ClaimedResult
		resp.Status = StatusRetry
		switch {
		case ok && (final.verdict == router.VerdictValid || final.verdict == router.VerdictInvalid):
			resp.Status = Status(final.verdict)
		case ok && final.verdict == router.VerdictNeedsSpec:
			resp.Status = StatusNeedsSpec
		}
	case ModeArbitration:
		resp.Result = req.Task.ClaimedResult
		resp.Status = StatusInconclusive
		if ok && final.verdict == router.VerdictValid {
			resp.Status = StatusSellerValid
		} else if ok && final.verdict == router.VerdictInvalid {
			resp.Status = StatusSellerInvalid
		}
	}
	resp.RetryInstructions = retryInstructions(req, resp.Status, final)
	return resp
}

// retryInstructions advise a retry for RETRY and NEEDS_SPEC; nil otherwise.
func retryInstructions(req *Request, status Status, final stepResult) *RetryInstructions {
	switch status {
	case StatusRetry:
		ri := &RetryInstructions{Policy: stronger(req.Policy), RetryAfterMS: 0}
		out := final.out
		switch {
		case final.step.Error != "":
			ri.Reason = "the replicas disagreed: " + final.step.Error
		case final.accepted && final.verdict == router.VerdictRetry:
			ri.Reason = "the replicas asked for a retry"
			ri.RetryAfterMS = 1000
			if len(final.reasons) > 0 {
				ri.Reason += ": " + final.reasons[0]
			}
		case out.Answered == 0:
			ri.Reason = fmt.Sprintf("no run answered: %d launched, %d failed, %d cancelled", out.Replicas, out.Failed, out.Cancelled)
			ri.RetryAfterMS = 1000
		case req.Policy == PolicyAdaptive:
			ri.Reason = fmt.Sprintf("the runs did not settle: %d of %d answers agree after %d runs (%d failed)",
				out.Agreeing, out.Agreeing+out.Against, out.Replicas, out.Failed)
		case req.Policy == PolicyOracle:
			ri.Reason = fmt.Sprintf("oracle answers only when a majority of its replicas answer and none dissents: %d of %d answers agree, %d of %d replicas answered",
				out.Agreeing, out.Agreeing+out.Against, out.Answered, out.Replicas)
		default:
			ri.Reason = fmt.Sprintf("no strict majority of at least two: %d of %d answers agree", out.Agreeing, out.Agreeing+out.Against)
		}
		return ri
	case StatusNeedsSpec:
		missing := slices.Clone(final.reasons)
		if len(missing) == 0 {
			missing = []string{"task.spec"}
		}
		return &RetryInstructions{
			Reason:  "the task does not say what a correct result is",
			Policy:  req.Policy,
			Missing: missing,
		}
	}
	return nil
}

// Validate reports whether r is a valid request: a 400 *Error listing each
// failing field by JSON path, including the task members the mode needs.
func (r *Request) Validate() error {
	errs := append(validate.Struct(r), r.Receipt.FieldErrors("receipt")...)
	need := func(field string, present bool) {
		if !present {
			errs = append(errs, problem.FieldError{Field: field, Rule: "required", Message: fmt.Sprintf("is required in %s mode", r.Mode)})
		}
	}
	has := func(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }
	switch r.Mode {
	case ModeDelegation:
		need("task.input", !r.Task.Input.IsZero())
	case ModeValidation:
		need("task.claimed_result", has(r.Task.ClaimedResult))
	case ModeArbitration:
		need("task.claimed_result", has(r.Task.ClaimedResult))
		need("task.dispute_context", has(r.Task.DisputeContext))
	}
	// A receipt hashes the input and the claimed result in RFC 8785 form,
	// which holds numbers only within the range of an IEEE 754 double:
	// refuse what cannot be hashed before any work is done.
	hashable := func(field string, raw json.RawMessage) {
		if _, err := receipt.HashJSON(raw); err != nil && json.Valid(raw) {
			errs = append(errs, problem.FieldError{Field: field, Rule: "hashable",
				Message: "cannot be hashed for the receipt (RFC 8785 takes numbers within IEEE 754 double range)"})
		}
	}
	if inc := r.Receipt.Include; r.Receipt.Requested() {
		if inc.InputHash && !r.Task.Input.IsZero() {
			hashable("task.input", r.Task.Input.Raw())
		}
		if inc.OutputHash && r.Mode != ModeDelegation && has(r.Task.ClaimedResult) {
			hashable("task.claimed_result", r.Task.ClaimedResult)
		}
	}
	if len(errs) > 0 {
		return problem.Invalid(errs)
	}
	return nil
}
