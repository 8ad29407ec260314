package trust

import (
	"encoding/json"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
)

// Mode is the intent of a call.
type Mode string

// The modes.
const (
	// ModeDelegation runs a task and returns its result.
	ModeDelegation Mode = "delegation"
	// ModeValidation checks a claimed result before someone acts on it.
	ModeValidation Mode = "validation"
	// ModeArbitration settles a dispute over a seller's claimed result.
	ModeArbitration Mode = "arbitration"
)

// Policy is the trust tier of a call: how much redundancy to buy.
type Policy string

// The tiers; the table in the package documentation maps each to router
// calls.
const (
	PolicyFast     Policy = "fast"
	PolicySafe     Policy = "safe"
	PolicyOracle   Policy = "oracle"
	PolicyAdaptive Policy = "adaptive"
)

// Status is the unified answer of a call.
type Status string

// The statuses. Delegation and validation answer VALID, INVALID, RETRY or
// NEEDS_SPEC; arbitration answers SELLER_VALID, SELLER_INVALID or
// INCONCLUSIVE.
const (
	StatusValid         Status = "VALID"
	StatusInvalid       Status = "INVALID"
	StatusRetry         Status = "RETRY"
	StatusNeedsSpec     Status = "NEEDS_SPEC"
	StatusSellerValid   Status = "SELLER_VALID"
	StatusSellerInvalid Status = "SELLER_INVALID"
	StatusInconclusive  Status = "INCONCLUSIVE"
)

// Request is the envelope of a trust call (docs/INTERFACE.md, section 9.1).
type Request struct {
	// Mode is delegation, validation or arbitration.
	Mode Mode `json:"mode" validate:"required,oneof=delegation validation arbitration"`
	// Task is what to run or judge.
	Task Task `json:"task"`
	// Policy is fast, safe, oracle or adaptive.
	Policy Policy `json:"policy" validate:"required,oneof=fast safe oracle adaptive"`
	// Context is the caller's context (agent id, market id, environment).
	Context map[string]any `json:"context,omitempty"`
	// Metadata is job or market metadata, such as client_trace_id.
	Metadata map[string]any `json:"metadata,omitempty"`
	// Receipt asks for a receipt of the decision. Absent, or
	// with mode none, no receipt is made and nothing is stored, and the
	// block sets no other member (receipt.Request.FieldErrors).
	Receipt receipt.Request `json:"receipt,omitzero"`
	// Delegation holds the options of a delegation (how its answers
	// agree); refused in the other modes. Absent means the defaults.
	Delegation *DelegationOptions `json:"delegation,omitempty"`
}

// Task is task of the envelope. Which members are required depends on the
// mode: delegation needs input, which must not be empty; validation needs
// claimed_result; arbitration needs claimed_result and dispute_context.
// A member the mode has no use for is refused: claimed_result in a
// delegation, dispute_context outside an arbitration, answer and
// tolerance outside a delegation; a delegation's spec must be a string.
type Task struct {
	// Type is the kind of task: summarization, qa, classification,
	// tool_call, or another label the workers understand.
	Type string `json:"type,omitempty"`
	// Input is the task's input: an object, a string, or the array form.
	// A delegation's holds something: text other than white space, an
	// object member, an array item.
	Input router.Input `json:"input,omitzero"`
	// Spec states what a correct result is, as JSON: a string, or an
	// object with a schema and constraints. A delegation's is a string,
	// the objective its workers are given; [Request.Validate] refuses
	// any other, naming task.spec.
	Spec json.RawMessage `json:"spec,omitempty" validate:"omitempty,rawjson"`
	// ClaimedResult is the result to validate or arbitrate, as JSON: a
	// plain string is written trust.JSON("Paris") or
	// json.RawMessage(`"Paris"`). [Request.Validate] refuses anything but
	// one JSON value, naming task.claimed_result, and refuses it in a
	// delegation, which produces its own result.
	ClaimedResult json.RawMessage `json:"claimed_result,omitempty" validate:"omitempty,rawjson"`
	// DisputeContext describes an arbitration's dispute, as JSON: who
	// claims what. It is refused in the other modes.
	DisputeContext json.RawMessage `json:"dispute_context,omitempty" validate:"omitempty,rawjson"`
	// Answer declares what a delegation answers: AnswerNumber for a
	// number, whose runs then agree within Tolerance around their median
	// (consensus.Median) and whose result is that median; empty for any
	// JSON value, whose runs agree when equal under the answer key. It is
	// refused outside delegation mode.
	Answer Answer `json:"answer,omitempty" validate:"omitempty,oneof=number"`
	// Tolerance is how far a number may lie from the median and still
	// agree with it, with Answer AnswerNumber only; nil means exact
	// numeric equality (18, 18.0 and "18" agree).
	Tolerance *router.Tolerance `json:"tolerance,omitempty"`
}

// Answer is task.answer: what a delegation answers.
type Answer string

// AnswerNumber declares a numeric answer: a JSON number, or a string
// that holds one as consensus.ParseNumber reads it. A run whose answer
// holds no number ("about 18", "n/a") answered but casts no vote: it
// counts in Evidence.Answered, in neither Agreement nor the confidence,
// keeps its label (OK), and Evidence.Disagreements lists it with a
// reason that begins "no vote:" (docs/INTERFACE.md, 6.6).
const AnswerNumber Answer = "number"

// Response is the unified answer of a trust call; its wire form is in
// docs/INTERFACE.md, section 9.3.
type Response struct {
	// Status is the outcome.
	Status Status `json:"status"`
	// Result is the chosen output: the delegated result, or the claimed
	// result that was judged. Null when there is none.
	Result json.RawMessage `json:"result"`
	// Confidence is a fraction between 0 and 1.
	Confidence float64 `json:"confidence"`
	// Evidence summarizes the trust signals.
	Evidence Evidence `json:"evidence"`
	// RetryInstructions guide a retry; null unless Status is RETRY or
	// NEEDS_SPEC.
	RetryInstructions *RetryInstructions `json:"retry_instructions"`
	// TraceID is the W3C trace id of the call, shared with the router
	// calls it made.
	TraceID string `json:"trace_id"`
	// ServiceVersion is the release of the trust service.
	ServiceVersion string `json:"service_version"`
	// Receipt is present only when the request asked for one: the whole
	// signed receipt (inline), or its receipt_id, ttl, visibility and
	// expires_at (detached).
	Receipt json.RawMessage `json:"receipt,omitempty"`
	// ReceiptClamped lists the receipt terms the service narrowed because
	// the request asked for more than its environment grants (a ttl of
	// 1000d kept 90d, public visibility granted as shared), each with what
	// was asked, what the receipt records, and why. Absent when nothing
	// was narrowed, or without a receipt.
	ReceiptClamped []ReceiptClamp `json:"receipt_clamped,omitempty"`
}

// Evidence summarizes how a status was reached.
type Evidence struct {
	// Redundancy is the total count of runs launched, over every step.
	Redundancy int `json:"redundancy"`
	// Agreement is the share of the answers, over every step, that back
	// the winner (see the package doc's tally).
	Agreement float64 `json:"agreement"`
	// Verdicts are the labels of every run, over every step, in order.
	Verdicts []router.Label `json:"verdicts"`
	// Disagreements lists the runs, over every step, that answered
	// otherwise or gave no answer, and why (Replica is the run's index in
	// Verdicts).
	Disagreements []Disagreement `json:"disagreements"`
	// Steps lists each router call made, in order: one for fast, safe and
	// oracle, one per run (up to five) for adaptive.
	Steps []Step `json:"steps"`
	// Usage adds up the tokens and cost the runs counted in Launched
	// reported, failed runs included, when any did (chat-model workers
	// do). A leader's check (Step.Check), which the caller is not
	// charged for, is not among them, nor in the receipt's usage.
	Usage *router.Usage `json:"usage,omitempty"`
	// Launched counts the runs started over every step (as Redundancy);
	// each ended answered, failed or cancelled before it answered. A
	// leader's check (Step.Check) is not among them.
	Launched int `json:"launched"`
	// Checked counts the runs of the steps that checked a leader
	// (Step.Check): runs the service made to keep learning, whose votes
	// the verdict does not count and the caller is not charged for.
	Checked int `json:"checked,omitempty"`
	// Answered counts the runs that answered: the votes.
	Answered int `json:"answered"`
	// Cancelled counts the runs cut short before they answered, because
	// the outcome was already decided: no vote and no dissent.
	Cancelled int `json:"cancelled"`
	// Failed counts the runs that ended in ERROR or TIMEOUT.
	Failed int `json:"failed"`
	// Calibration is the basis of the response's confidence over a
	// router that keeps reputation: the calibration map of the call's
	// tier and, for a validation, verdict ("safe/VALID"; with
	// NumericCalibrationSuffix for a numeric delegation), the outcomes
	// it holds, the map's input (Uncalibrated: a validation's weighted
	// confidence, a delegation's consensus.Conservative number, or for
	// adaptive's plurality the Posterior of its counts), the
	// conservative number (consensus.Conservative of the tally, or for
	// an open answer what Plurality says; stated with no outcome) and
	// the points it was read between; Basis.Read recomputes the
	// confidence. The weighted confidence both may take is not in the
	// response (the receipt's consensus snapshot has the weights). A judged delegation carries its last judgement's,
	// the validation whose confidence it states. Absent otherwise.
	Calibration *reputation.Basis `json:"calibration,omitempty"`
	// Leader is, when an adaptive validation ran one session alone
	// because it leads the scope, that session's record against the
	// majority of the other votes of the calls it voted in whose
	// outcome was reported, with the level it passed at and its margin
	// over the other sessions (reputation.Book.Leader): the status is its verdict, and the
	// confidence is read on the calibration map of the leader's
	// verdicts (Calibration, a tier ending in LeaderCalibrationSuffix).
	// Absent otherwise.
	Leader *reputation.Lead `json:"leader,omitempty"`
	// Dissent is, when an adaptive validation answered one session's
	// verdict against at least four that agree on the other (the dissent
	// rule), that session's record against the majority of the other
	// votes of the calls it voted in whose outcome was reported: the
	// status is its verdict, and the confidence is the share of such
	// disagreements it is expected to win, (won+1)/(won+lost+2). The rule
	// hears it when the chance that it wins more than half of them,
	// consensus.Posterior of won and lost, each rounded to the nearest
	// whole (reputation.Lead.Beats), is at least 0.8. Absent otherwise;
	// see the package doc.
	Dissent *reputation.Lead `json:"dissent,omitempty"`
	// Plurality is, when a delegation of an open answer states its
	// confidence from the groups of equal answers (over a router that
	// keeps reputation), what it was stated from: evidence.calibration's
	// conservative number is consensus.PluralityPosteriorAt(Groups, 0,
	// Coincidence, Reliability) for adaptive's plurality, and for a
	// weighted tally the smaller of that and the weighted confidence.
	// Absent otherwise.
	Plurality *Plurality `json:"plurality,omitempty"`
	// Lone is, when the service sets an escalation threshold
	// ([WithEscalationThreshold]) and an adaptive call that no leader
	// decided ended on one answer with none against it, that threshold
	// and the confidence the answer reported: the call is accepted,
	// settled by that run alone, exactly when the confidence is at least
	// the threshold. Absent otherwise.
	Lone *Lone `json:"lone,omitempty"`
	// Grouping is how a delegation's outputs were grouped by meaning,
	// with the threshold and every pair's similarity, when the service
	// groups them ([WithGrouper]); absent otherwise.
	Grouping *consensus.Grouping `json:"grouping,omitempty"`
	// Judging records a judged delegation (delegation.agreement
	// "judged"): each candidate answer, the run that produced it and the
	// runs that judged it; absent otherwise.
	Judging *Judging `json:"judging,omitempty"`
	// Payment states the call's payment when it was paid in escrow
	// ([WithEscrow]): the hold and what the status commits it to, capture
	// or void. The response is written before the payment is finished;
	// its final state is in the payment response's escrow report.
	// Absent for a call paid otherwise or not at all.
	Payment *receipt.Payment `json:"payment,omitempty"`
}

// Plurality is what a delegation's plurality states its confidence from
// (Evidence.Plurality).
type Plurality struct {
	// Groups holds the size of each group of equal answers, the
	// winner's first.
	Groups []int `json:"groups"`
	// Coincidence is the chance that two wrong answers coincide, learned
	// in the call's scope (reputation.Book.Coincidence).
	Coincidence float64 `json:"coincidence"`
	// Reliability is the mean reliability of the runs that answered, the
	// rate at which the plurality's prior expects a run to be right.
	Reliability float64 `json:"reliability"`
}

// Lone is what adaptive's stop settled, or declined to settle, one
// answer alone on (Evidence.Lone).
type Lone struct {
	// Threshold is the service's escalation threshold
	// ([WithEscalationThreshold], consensus.Stop.Lone).
	Threshold float64 `json:"threshold"`
	// Confidence is the confidence the one answer's run reported.
	Confidence float64 `json:"confidence"`
}

// Disagreement is one replica that did not side with the outcome.
type Disagreement struct {
	// Replica is the run's index among every run of the call.
	Replica int `json:"replica"`
	// SessionID is the session it ran on.
	SessionID router.SessionID `json:"session_id"`
	// Label is its verdict, or TIMEOUT or ERROR.
	Label router.Label `json:"label"`
	// Reason is its first reason or error, if any.
	Reason string `json:"reason,omitempty"`
}

// Step is one router call made for a trust call.
type Step struct {
	// Route is the router path called, such as "/api/v3/validate".
	Route string `json:"route"`
	// Tier is the router tier asked for.
	Tier router.Tier `json:"tier"`
	// Replicas is the count of replicas the step ran.
	Replicas int `json:"replicas"`
	// Outcome is the step's verdict (validation, arbitration) or OK
	// (delegation), or empty when nothing won.
	Outcome string `json:"outcome"`
	// Agreement is the step's agreement.
	Agreement float64 `json:"agreement"`
	// Confidence is the confidence the step's router call stated. The
	// runs of adaptive, which the service calibrates as one tally (see
	// Evidence.Calibration), state their weighted confidence before any
	// calibration (router.WithoutCalibration).
	Confidence float64 `json:"confidence"`
	// Escalated says the next step was taken because of this one.
	Escalated bool `json:"escalated,omitempty"`
	// Error is the router error that ended the step, if any.
	Error string `json:"error,omitempty"`
	// TaskID is the router's task id for the step.
	TaskID string `json:"task_id,omitempty"`
	// Sessions are the sessions its replicas ran on.
	Sessions []router.SessionID `json:"sessions"`
	// TaskIDs are the per-replica task ids.
	TaskIDs []string `json:"task_ids"`
	// Check says the step ran a session beside a leader that decided the
	// call alone, to keep checking the leader (WithLeaderCheck): its vote
	// is its Outcome, and it counts in neither the verdict nor Launched.
	Check bool `json:"check,omitempty"`
}

// RetryInstructions guide a caller that got RETRY or NEEDS_SPEC.
type RetryInstructions struct {
	// Reason says why a retry is advised.
	Reason string `json:"reason"`
	// RetryAfterMS is how long to wait before retrying, in milliseconds.
	RetryAfterMS int64 `json:"retry_after_ms"`
	// Policy is the tier to retry with: the stronger one, or the same
	// one when runs ran out of time (a tier that runs more needs more
	// time still).
	Policy Policy `json:"policy,omitempty"`
	// Missing lists what the task must add (NEEDS_SPEC).
	Missing []string `json:"missing,omitempty"`
}
