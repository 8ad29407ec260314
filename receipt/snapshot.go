package receipt

// PolicySnapshot is policy_snapshot: the tier and redundancy that ran.
type PolicySnapshot struct {
	// Tier is fast, safe, oracle or adaptive.
	Tier string `json:"tier" validate:"required,oneof=fast safe oracle adaptive"`
	// Consensus is the redundancy of the final step.
	Consensus PolicyConsensus `json:"consensus"`
	// Calibration is the basis of the receipt's confidence when it was
	// calibrated on reported outcomes (reputation on); absent otherwise.
	Calibration *CalibrationSnapshot `json:"calibration,omitempty"`
	// Leader is, when one session decided an adaptive validation alone,
	// its record against the other votes; absent otherwise.
	Leader *LeaderSnapshot `json:"leader,omitempty"`
	// Dissent is, when an adaptive validation answered one session's
	// verdict against four or more that agree on the other, that
	// session's record against the other votes (a LeaderSnapshot: the
	// rule asks consensus.Posterior(Won, Lost) of at least 0.8, counts
	// rounded, and states (Won+1)/(Won+Lost+2)); absent otherwise.
	Dissent *LeaderSnapshot `json:"dissent,omitempty"`
	// Plurality is, when a delegation of an open answer stated its
	// confidence from its groups of equal answers, those groups and the
	// chance that two wrong answers coincide; absent otherwise.
	Plurality *PluralitySnapshot `json:"plurality,omitempty"`
	// Lone is, when the issuer's adaptive tier may settle a call on one
	// answer (an escalation threshold) and the call ended on one answer
	// with none against it, the threshold and the confidence that answer
	// reported; absent otherwise.
	Lone *LoneSnapshot `json:"lone,omitempty"`
}

// LoneSnapshot is policy_snapshot.lone: what adaptive's stop settled, or
// declined to settle, one answer alone on, so that the decision can be
// checked: one answer with none against it is accepted exactly when
// Confidence is at least Threshold.
type LoneSnapshot struct {
	// Threshold is the issuer's escalation threshold: the confidence one
	// answer must report to settle the call alone.
	Threshold float64 `json:"threshold" validate:"gt=0,lte=1"`
	// Confidence is the confidence the one answer's run reported.
	Confidence float64 `json:"confidence" validate:"gte=0,lte=1"`
}

// PluralitySnapshot is policy_snapshot.plurality: what a delegation's
// plurality states its confidence from, so that it can be recomputed.
// With no outcome reported the confidence is Calibration.Conservative,
// consensus.PluralityPosteriorAt(Groups, 0, Coincidence, Reliability);
// once outcomes are reported, the map read as Calibration says.
type PluralitySnapshot struct {
	// Groups holds the size of each group of equal answers, the
	// winner's first.
	Groups []int `json:"groups" validate:"min=1,max=5,dive,gt=0"`
	// Coincidence is the chance that two wrong answers coincide, learned
	// in the call's scope.
	Coincidence float64 `json:"coincidence" validate:"gte=0,lte=1"`
	// Reliability is the runs' mean reliability the prior is centred on.
	Reliability float64 `json:"reliability" validate:"gt=0,lte=1"`
}

// LeaderSnapshot is policy_snapshot.leader: the session whose record of
// reported outcomes made it decide an adaptive validation alone (package
// reputation's Lead), so that the rule can be checked: the one-sided sign
// test of Won wins in Won+Lost disagreements with the majority of the
// other votes is at most Level, which is the issuer's lead level
// (reputation.Options.LeadLevel: reputation.DefaultLeadLevel, 1/8,
// unless the host sets it), or 1/2 when the leader's reliability stood
// Margin above every other session's, at least the issuer's lead margin
// (reputation.Options.LeadMargin: reputation.DefaultLeadMargin, 0.05),
// and it had won two disagreements or more. The decision's confidence
// is then read on the map of a leader's verdicts (Calibration.Tier ends
// in "/leader"). A dissent (policy_snapshot.dissent) has no Level or
// Margin.
type LeaderSnapshot struct {
	// Session is the leader's session id.
	Session int64 `json:"session_id" validate:"gt=0"`
	// Won counts the reported calls on which its verdict was right and
	// the majority of the other votes wrong.
	Won float64 `json:"won" validate:"gte=0"`
	// Lost counts the reported calls on which its verdict was wrong and
	// the majority of the other votes right.
	Lost float64 `json:"lost" validate:"gte=0"`
	// Level is the significance the leader's record passed at.
	Level float64 `json:"level,omitempty" validate:"gte=0,lte=0.5"`
	// Margin is the leader's reliability less the highest reliability
	// of the other sessions its call could run.
	Margin float64 `json:"margin,omitempty" validate:"gte=0,lte=1"`
}

// CalibrationSnapshot is policy_snapshot.calibration: what the decision's
// confidence was read from (package reputation's Basis), so that it can
// be recomputed: with no point the confidence is Conservative; with
// basis "held", Conservative at most the point's rate; else it is
// Uncalibrated read on Points (one: shifted by its rate less its score;
// two: the line between them), clamped to [0, 1].
type CalibrationSnapshot struct {
	// Tier names the calibration map: the trust tier.
	Tier string `json:"tier" validate:"required"`
	// Basis is "uncalibrated" (no outcome reported yet), "outcomes", or
	// "held" (an open answer whose score lay below the map's lowest
	// point).
	Basis string `json:"basis" validate:"required,oneof=uncalibrated outcomes held"`
	// Outcomes counts the outcomes the map holds.
	Outcomes float64 `json:"outcomes" validate:"gte=0"`
	// Uncalibrated is the score before calibration, the map's input: the
	// weighted confidence.
	Uncalibrated float64 `json:"uncalibrated" validate:"gte=0,lte=1"`
	// Conservative is the confidence stated with no outcome reported
	// (never above an unweighted count of the same votes). Receipts
	// issued before it was recorded omit it; their Uncalibrated was this
	// number.
	Conservative float64 `json:"conservative,omitempty" validate:"gte=0,lte=1"`
	// Points are the map's points it was read between, at most two.
	Points []CalibrationPoint `json:"points" validate:"max=2,dive"`
}

// CalibrationPoint is one point of a calibration map: the mean score of
// its calls before calibration, the rate at which they turned out right,
// and the outcomes behind it.
type CalibrationPoint struct {
	Score    float64 `json:"score" validate:"gte=0,lte=1"`
	Rate     float64 `json:"rate" validate:"gte=0,lte=1"`
	Outcomes float64 `json:"outcomes" validate:"gte=0"`
}

// PolicyConsensus is policy_snapshot.consensus.
type PolicyConsensus struct {
	// Replicas is the runs of the call: 1, 3 or 5 for one consensus
	// call, and 2 to 5 for the adaptive tier, whose runs are pooled.
	Replicas int `json:"replicas" validate:"min=1,max=5"`
	// Strategy is the aggregation strategy, such as "majority".
	Strategy string `json:"strategy" validate:"required"`
}

// ConsensusSnapshot is consensus_snapshot: a copy of the consensus block of
// the router's version 3 response.
type ConsensusSnapshot struct {
	// Replicas is the number of runs executed: 1, 3 or 5 for one
	// consensus call, and 2 to 5 for the adaptive tier's pooled tally.
	Replicas int `json:"replicas" validate:"min=1,max=5"`
	// Agreement is the winning group's share of the votes: of the
	// replicas that answered, and of the failed ones too when Failures
	// is "negative_evidence".
	Agreement float64 `json:"agreement" validate:"gte=0,lte=1"`
	// Verdicts holds one label per replica, in replica order.
	Verdicts []string `json:"verdicts" validate:"required"`
	// Strategy is the aggregation strategy used.
	Strategy string `json:"strategy" validate:"required"`
	// Confidence is the consensus confidence of the votes, counted as
	// Failures says.
	Confidence float64 `json:"confidence" validate:"gte=0,lte=1"`
	// LowConfidence copies the router's low_confidence flag.
	LowConfidence bool `json:"low_confidence,omitempty"`
	// Agreeing lists the replicas whose votes backed the winner, in
	// replica order: with Verdicts and Failures it gives Agreement
	// (agreeing over the replicas that voted), even where every verdict
	// reads OK and an output dissented.
	Agreeing []int `json:"agreeing,omitempty" validate:"omitempty,dive,gte=0,lt=5"`
	// WeightBy is what weighed the votes under strategy "weighted":
	// "reputation".
	WeightBy string `json:"weight_by,omitempty"`
	// Failures is how the failed replicas (TIMEOUT, ERROR) counted:
	// "negative_evidence" when the router counted them as one group of
	// votes against the winner (its consensus block's failures member);
	// absent under the default, "non_votes", where they are no votes.
	// It is the router's counting, and the consensus snapshot's; the
	// trust service's decision counts failed runs as no votes.
	Failures string `json:"failures,omitempty"`
	// Weights holds the weight each replica's vote counted with under
	// "weighted", in replica order (0 for a replica that cast no vote: a
	// cancelled one, or a failed one unless Failures is
	// "negative_evidence").
	Weights []float64 `json:"weights,omitempty"`
	// Tempering is the factor the summed weights were scaled by for the
	// correlation of the sessions' errors under "weighted": Confidence is
	// consensus.Credence of the groups' summed weights under it.
	Tempering float64 `json:"tempering,omitempty" validate:"gte=0,lte=1"`
	// Tolerance is the agreement rule under "median" and
	// "median_of_means": a number x agrees with the aggregate m when
	// |x − m| ≤ max(absolute, relative·|m|).
	Tolerance *Tolerance `json:"tolerance,omitempty"`
	// Numbers holds, under "median" and "median_of_means", the number
	// each replica answered, in replica order; null for a replica that
	// gave none.
	Numbers []*float64 `json:"numbers,omitempty"`
	// Aggregate is the median (or median of means) of Numbers, the
	// delegation's result.
	Aggregate *float64 `json:"aggregate,omitempty"`
}

// Tolerance is the tolerance of a numeric consensus snapshot.
type Tolerance struct {
	// Absolute is a distance, ≥ 0.
	Absolute float64 `json:"absolute" validate:"gte=0"`
	// Relative is a share of the aggregate's magnitude, ≥ 0.
	Relative float64 `json:"relative" validate:"gte=0"`
}
