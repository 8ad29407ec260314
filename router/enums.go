package router

// Tier is the service tier a request asks for (policy.tier).
type Tier string

// The router tiers. TierAdaptive belongs to the trust service, which turns it
// into follow-on version 3 calls; the router rejects it.
const (
	TierFast     Tier = "fast"
	TierSafe     Tier = "safe"
	TierOracle   Tier = "oracle"
	TierBalanced Tier = "balanced"
	TierAdaptive Tier = "adaptive"
)

// Verdict is the answer of a validation or a fact check.
type Verdict string

// Validation verdicts and fact-check verdicts.
const (
	VerdictValid     Verdict = "VALID"
	VerdictInvalid   Verdict = "INVALID"
	VerdictRetry     Verdict = "RETRY"
	VerdictNeedsSpec Verdict = "NEEDS_SPEC"
	VerdictTrue      Verdict = "TRUE"
	VerdictFalse     Verdict = "FALSE"
)

// Label is the coarse label of one replica in a version 3 response
// (consensus.verdicts): a verdict for validate and factcheck, a task-level
// label for delegate, and TIMEOUT or ERROR for a replica that gave no answer.
type Label string

// Task-level labels. A validate or factcheck replica that answered carries
// its verdict as its label.
const (
	LabelOK        Label = "OK"
	LabelTimeout   Label = "TIMEOUT"
	LabelError     Label = "ERROR"
	LabelCancelled Label = "CANCELLED" // cut short: the outcome was already decided
)

// ExecutionMode is execution.mode of a delegate v2 request.
type ExecutionMode string

// The execution modes of a delegate request.
const (
	ExecutionTools  ExecutionMode = "tools"
	ExecutionSimple ExecutionMode = "simple"
	ExecutionChain  ExecutionMode = "chain"
)

// Aggregation is consensus.aggregation of a version 3 request.
type Aggregation string

// Aggregation strategies. AggregationMajority (the default),
// AggregationWeighted, and for delegations whose outputs are numbers
// AggregationMedian and AggregationMedianOfMeans are available in
// version 3; AggregationModelEnsemble is named by the interface for later
// and is rejected with a "not yet available" error.
const (
	AggregationMajority      Aggregation = "majority"
	AggregationWeighted      Aggregation = "weighted"
	AggregationMedian        Aggregation = "median"
	AggregationMedianOfMeans Aggregation = "median_of_means"
	AggregationModelEnsemble Aggregation = "model_ensemble"
)

// WeightBy is consensus.weight_by of a version 3 request: what weighs
// the votes under AggregationWeighted.
type WeightBy string

// What may weigh votes. Only WeightByReputation is available, and is the
// default under AggregationWeighted; the others are named by the
// interface and are rejected with a "not available" error.
const (
	WeightByReputation WeightBy = "reputation"
	WeightByStake      WeightBy = "stake"
	WeightByLatency    WeightBy = "latency"
	WeightByCost       WeightBy = "cost"
)

// DisagreementPolicy says what a version 3 call does when replicas disagree
// (see docs/INTERFACE.md, section 6.3).
type DisagreementPolicy string

// The disagreement policies. The zero value means DisagreeBestEffort.
const (
	// DisagreeReturnAll returns every replica's result with the summary; the
	// top-level answer is the majority's, or empty when there is none.
	DisagreeReturnAll DisagreementPolicy = "return_all"
	// DisagreeFailHard treats any disagreement as an error.
	DisagreeFailHard DisagreementPolicy = "fail_hard"
	// DisagreeBestEffort picks a winner and flags it low confidence.
	DisagreeBestEffort DisagreementPolicy = "best_effort"
)

// Replica counts allowed in consensus.replicas.
const (
	Replicas1 = 1
	Replicas3 = 3
	Replicas5 = 5
)

// FactcheckMode is the mode of a fact check: standard, or realtime with
// grounding in current sources.
type FactcheckMode string

// The fact-check modes the public router documents.
const (
	FactcheckStandard FactcheckMode = "standard"
	FactcheckRealtime FactcheckMode = "realtime"
)
