package router

import (
	"encoding/json"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/reputation"
)

// ConsensusRequest is the consensus block of a version 3 request.
type ConsensusRequest struct {
	// Replicas is the number of independent runs: 1, 3 or 5.
	Replicas int `json:"replicas" validate:"oneof=1 3 5"`
	// SessionPool lists candidate sessions. Empty means every session that
	// serves the tier.
	SessionPool []SessionID `json:"session_pool,omitempty" validate:"omitempty,unique,dive,gt=0"`
	// Aggregation is the strategy: "majority" (the default when empty)
	// or "weighted", which weighs each vote by its session's learned
	// reliability (see [Engine.ValidateV3]); for a delegation whose
	// outputs are numbers, "median" or "median_of_means" (see
	// [Engine.DelegateV3]).
	Aggregation Aggregation `json:"aggregation,omitempty" validate:"omitempty,aggregation"`
	// Strategy is the public router's other name for Aggregation, which
	// its clients send. It is accepted when it names the aggregation run
	// (Aggregation, or "majority" when that is empty) and refused
	// otherwise, since it would be ignored; "" names none and is refused
	// too.
	Strategy Aggregation `json:"strategy,omitempty" validate:"omitempty,strategy"`
	// WeightBy is what weighs the votes under "weighted", and under
	// "median" (the weighted median): only "reputation" (the default
	// under "weighted") is available. It is refused with any other
	// aggregation.
	WeightBy WeightBy `json:"weight_by,omitempty" validate:"omitempty,weight_by"`
	// Tolerance is how far a number may lie from the aggregate and still
	// agree with it, under "median" and "median_of_means"; nil means
	// exact numeric equality. It is refused with any other aggregation.
	Tolerance *Tolerance `json:"tolerance,omitempty"`
	// DisagreementPolicy is return_all, fail_hard or best_effort (the
	// default when empty).
	DisagreementPolicy DisagreementPolicy `json:"disagreement_policy,omitempty" validate:"omitempty,oneof=return_all fail_hard best_effort"`
}

// ConsensusResponse is the consensus block present in every version 3
// response.
type ConsensusResponse struct {
	// Replicas is the number of runs executed: 1, 3 or 5, the count the
	// request asked for, every one of them launched. A run cut short
	// before it answered (early quorum) still counts here and shows as
	// CANCELLED in Verdicts; it counts in neither Agreement nor
	// Confidence.
	Replicas int `json:"replicas"`
	// Agreement is the fraction of the votes that back the winner: the
	// winning group over the replicas that answered (plus the failed ones
	// when Failures is "negative_evidence"). Cancelled replicas are no
	// votes, so a unanimous early quorum reads 1.
	Agreement float64 `json:"agreement"`
	// Verdicts holds one label per replica, in replica order.
	Verdicts []Label `json:"verdicts"`
	// Strategy is the aggregation strategy used.
	Strategy Aggregation `json:"strategy"`
	// Confidence is, under "majority", consensus.Posterior of the votes
	// (the failed replicas among those against when Failures is
	// "negative_evidence"): the probability that the winner is the answer
	// a majority of the panel would give; under "weighted", the calibrated probability
	// that the winner is right: with no outcome reported the weighted
	// confidence (consensus.Weighted, given the votes' weights and the
	// snapshot's correlation) no higher than consensus.Posterior of the
	// votes (consensus.Conservative), and once outcomes are reported
	// the weighted confidence read on the calibration map that they
	// built through [Engine.Feedback] (see Calibration), or the weighted
	// confidence alone for an in-process caller that calibrates the
	// answer itself ([WithoutCalibration]); under "median" and "median_of_means",
	// consensus.Posterior of the numbers that agree with the aggregate
	// and those that do not, or under weight_by the weighted probability
	// of their two groups (consensus.Median).
	Confidence float64 `json:"confidence"`
	// WeightBy is what weighed the votes under "weighted": "reputation".
	WeightBy WeightBy `json:"weight_by,omitempty"`
	// Failures is how the failed replicas (TIMEOUT, ERROR) counted:
	// consensus.FailuresNegative ("negative_evidence", see
	// [WithFailureMode]) when they formed one group of votes against the
	// winner, in Agreement and Confidence and under "weighted" with the
	// weight each failed run records; empty under the default, where
	// they are no votes.
	Failures consensus.FailureMode `json:"failures,omitempty"`
	// Agreeing lists the replicas whose votes backed the winner (same
	// label, and for delegate an output equivalent under the answer
	// key), in replica order; empty when none won. With Verdicts it
	// gives Agreement: the replicas that answered otherwise are the
	// votes against.
	Agreeing []int `json:"agreeing,omitempty"`
	// Reputation is the reputation snapshot that weighed the votes under
	// "weighted"; each run's weight and reliability are in its evidence.
	Reputation *ReputationSnapshot `json:"reputation,omitempty"`
	// Calibration is the basis of Confidence under "weighted": the map
	// (tier "weighted"), the outcomes it holds, the weighted confidence
	// (Uncalibrated), the conservative number and the points it was
	// read between; Basis.Read, the conservative number with no point
	// and reputation.Interpolate(Points, Uncalibrated) with points, is
	// Confidence.
	Calibration *reputation.Basis `json:"calibration,omitempty"`
	// LowConfidence is true when best_effort picked a winner despite
	// disagreement, or when no replica answered (an addition to the block).
	LowConfidence bool `json:"low_confidence,omitempty"`
	// Notes says how the request was read where it could be read two
	// ways, such as a policy.redundancy that consensus.replicas overrides
	// (an addition to 2.6).
	Notes []string `json:"notes,omitempty"`
	// Tolerance is the agreement rule of "median" and
	// "median_of_means", the zero value for exact equality; nil under
	// the other strategies.
	Tolerance *Tolerance `json:"tolerance,omitempty"`
	// Numbers holds, under "median" and "median_of_means", the number
	// each replica's output holds (consensus.ParseNumber), in replica
	// order; null for a replica that gave none.
	Numbers []*float64 `json:"numbers,omitempty"`
	// Aggregate is the aggregate of Numbers under "median" and
	// "median_of_means" (the result); absent when no replica gave a
	// number.
	Aggregate *float64 `json:"aggregate,omitempty"`
}

// Tolerance is consensus.tolerance of a version 3 request: a number x
// agrees with the aggregate m when |x − m| ≤ max(Absolute,
// Relative·|m|). The zero Tolerance is exact numeric equality.
type Tolerance struct {
	// Absolute is a distance, ≥ 0.
	Absolute float64 `json:"absolute" validate:"gte=0"`
	// Relative is a share of |m|, from 0 to 1: above 1, a number of the
	// other sign than m would agree with it.
	Relative float64 `json:"relative" validate:"gte=0,lte=1"`
}

// ReputationSnapshot is what a weighted call read of the reputation it
// was weighed with, besides each run's reliability and weight: the
// reliability of a session with no record, and the correlation of the
// sessions' errors, with the tempering it gave the call's votes.
// Confidence is consensus.Credence of the groups' summed weights under
// Tempering.
type ReputationSnapshot struct {
	// Prior is the reliability of a session with no record.
	Prior float64 `json:"prior"`
	// Correlation is ρ, how far the sessions' errors go together.
	Correlation float64 `json:"correlation"`
	// Tempering is 1/(1+(n-1)ρ) for the n votes that counted.
	Tempering float64 `json:"tempering"`
}

// DelegateV3Request is the body of POST /api/v3/delegate: the delegate v2
// payload plus a consensus block. SessionID is optional here: replicas run
// on sessions drawn from consensus.session_pool.
type DelegateV3Request struct {
	// SessionID, if set, is the first candidate session.
	SessionID SessionID `json:"session_id,omitempty" validate:"omitempty,gt=0"`
	DelegateTask
	// Consensus sets the redundancy.
	Consensus ConsensusRequest `json:"consensus"`
}

// DelegateV3Response is the answer to a delegate v3 call: the winning
// result, its evidence with one run per replica, and the consensus block.
// Result is null when no answer won (return_all without a majority, or all
// replicas failed).
type DelegateV3Response struct {
	// TaskID identifies the call.
	TaskID string `json:"task_id"`
	// Result is the winning output.
	Result json.RawMessage `json:"result"`
	// Evidence is the winner's evidence plus the runs of all replicas.
	Evidence DelegateEvidence `json:"evidence"`
	// Consensus summarizes the replicas.
	Consensus ConsensusResponse `json:"consensus"`
}

// ValidateV3Request is the body of POST /api/v3/validate: the validate v2
// payload plus a consensus block. SessionID is optional here.
type ValidateV3Request struct {
	// SessionID, if set, is the first candidate session.
	SessionID SessionID `json:"session_id,omitempty" validate:"omitempty,gt=0"`
	ValidateTask
	// Consensus sets the redundancy.
	Consensus ConsensusRequest `json:"consensus"`
}

// ValidateV3Response is the answer to a validate v3 call: the final
// verdict, evidence with one run per replica, and the consensus block.
// Verdict is empty when no verdict won (return_all without a majority).
type ValidateV3Response struct {
	// RequestID echoes the request's request_id.
	RequestID string `json:"request_id,omitempty"`
	// Verdict is the final verdict.
	Verdict Verdict `json:"verdict"`
	// Confidence is the consensus confidence.
	Confidence float64 `json:"confidence"`
	// Reasons are the winning replicas' reasons, without repeats.
	Reasons []string `json:"reasons"`
	// Evidence holds one run per replica, and scores.
	Evidence ValidateEvidence `json:"evidence"`
	// Consensus summarizes the replicas.
	Consensus ConsensusResponse `json:"consensus"`
}

// FactcheckRequest is the body of POST /api/v3/factcheck. The interface shows
// only the consensus block; the rest follows validate v2 and the public
// router's factcheck: the statement to check, optional context, a mode and
// a policy.
type FactcheckRequest struct {
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
	// Policy sets the tier and rules.
	Policy ValidatePolicy `json:"policy"`
	// Consensus sets the redundancy.
	Consensus ConsensusRequest `json:"consensus"`
}

// FactcheckResponse is the answer to a fact check: TRUE or FALSE, evidence
// with one run per replica, and the consensus block.
type FactcheckResponse struct {
	// RequestID echoes the request's request_id.
	RequestID string `json:"request_id,omitempty"`
	// Verdict is TRUE or FALSE, or empty when none won.
	Verdict Verdict `json:"verdict"`
	// Confidence is the consensus confidence.
	Confidence float64 `json:"confidence"`
	// Reasons are the winning replicas' reasons, without repeats.
	Reasons []string `json:"reasons"`
	// Evidence holds one run per replica.
	Evidence ValidateEvidence `json:"evidence"`
	// Consensus summarizes the replicas.
	Consensus ConsensusResponse `json:"consensus"`
}
