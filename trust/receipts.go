package trust

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
)

// DefaultCaller owns the receipts of calls whose context names no caller
// (see [WithCaller]): in-process calls of a host that serves no one else.
const DefaultCaller = router.DefaultCaller

// WithCaller returns a context naming the integration that makes a call:
// it owns the call's receipt, and only it may report the call's outcome
// ([Service.Feedback]). [NewHandler] sets it from the authenticated
// credential. It is router.WithCaller, so that the router the service
// runs on knows the same caller.
func WithCaller(ctx context.Context, caller string) context.Context {
	return router.WithCaller(ctx, caller)
}

// CallerFrom returns the caller set by [WithCaller] (router.CallerFrom:
// within a request a handler admitted, the caller it names; else
// DefaultCaller).
func CallerFrom(ctx context.Context) string { return router.CallerFrom(ctx) }

// receiptParams gathers what a receipt records from what really ran: the
// consensus and policy of final, the pooled accounting of every step (see
// Service.tally), with the calibration basis resp states its confidence
// on (none for a judged delegation that rejected every candidate, whose
// 0 is read on no map), and the sessions and tasks of every step but a
// leader's check (Step.Check), whose vote the verdict does not count.
func (s *Service) receiptParams(ctx context.Context, req *Request, resp *Response, final stepResult, steps []stepResult) receipt.Params {
	refs := &receipt.Refs{Sessions: []int64{}, Tasks: []string{}, RouterTraceIDs: []string{resp.TraceID}}
	for _, st := range steps {
		if st.step.Check {
			continue // the receipt records the runs the verdict counts
		}
		for _, id := range st.step.Sessions {
			refs.Sessions = append(refs.Sessions, int64(id))
		}
		refs.Tasks = append(refs.Tasks, st.step.TaskIDs...)
	}
	var input any
	if !req.Task.Input.IsZero() {
		input = json.RawMessage(req.Task.Input.Raw())
	}
	strategy := router.AggregationMajority
	if final.consensus != nil && final.consensus.Strategy != "" {
		strategy = final.consensus.Strategy // weighted, with reputation on
	}
	return receipt.Params{
		Request:    req.Receipt,
		Mode:       string(req.Mode),
		TaskType:   req.Task.Type,
		Input:      input,
		Output:     resp.Result,
		Status:     string(resp.Status),
		Confidence: resp.Confidence,
		Reasons:    decisionReasons(resp, final),
		Agreement:  &receipt.Agreement{Share: resp.Evidence.Agreement, Replicas: final.step.Replicas, Spent: resp.Evidence.Redundancy},
		Policy: &receipt.PolicySnapshot{
			Tier:        string(req.Policy),
			Consensus:   receipt.PolicyConsensus{Replicas: final.step.Replicas, Strategy: string(strategy)},
			Calibration: calibrationSnapshot(resp.Evidence.Calibration),
			Leader:      leaderSnapshot(resp.Evidence.Leader),
			Dissent:     leaderSnapshot(resp.Evidence.Dissent),
			Plurality:   pluralitySnapshot(resp.Evidence.Plurality),
			Lone:        loneSnapshot(resp.Evidence.Lone),
		},
		Consensus:      consensusSnapshot(final, final.key),
		Refs:           refs,
		Payment:        resp.Evidence.Payment,
		Owner:          CallerFrom(ctx),
		Counterparties: req.Receipt.Counterparties,
	}
}

// consensusSnapshot copies the router's consensus block of a step, or
// describes a single-session step the same way, with the replicas that
// agreed with the winner (under key, as st's pooled tally counted them,
// when the block does not list them) and, under "weighted", each run's
// weight.
func consensusSnapshot(st stepResult, key func(any) (string, error)) *receipt.ConsensusSnapshot {
	c := st.consensus
	if c == nil {
		c = &router.ConsensusResponse{Replicas: st.step.Replicas, Agreement: st.agreement, Verdicts: st.verdicts,
			Strategy: router.AggregationMajority, Confidence: st.confidence}
	}
	verdicts := make([]string, len(c.Verdicts))
	for i, v := range c.Verdicts {
		verdicts[i] = string(v)
	}
	strategy := c.Strategy
	if strategy == "" { // the block names none: majority, the version 3 default, as in the policy snapshot
		strategy = router.AggregationMajority
	}
	cs := &receipt.ConsensusSnapshot{
		Replicas: c.Replicas, Agreement: c.Agreement, Verdicts: verdicts,
		Strategy: string(strategy), Confidence: c.Confidence, LowConfidence: c.LowConfidence,
		Agreeing: c.Agreeing, WeightBy: string(c.WeightBy), Failures: string(c.Failures),
	}
	if c.Tolerance != nil {
		cs.Tolerance = &receipt.Tolerance{Absolute: c.Tolerance.Absolute, Relative: c.Tolerance.Relative}
		cs.Numbers, cs.Aggregate = c.Numbers, c.Aggregate
	}
	if cs.Agreeing == nil && c.Agreement > 0 {
		cs.Agreeing = st.out.Backers(key)
	}
	if c.Reputation != nil {
		cs.Tempering = c.Reputation.Tempering
		cs.Weights = make([]float64, len(st.runs))
		for i, r := range st.runs {
			if r.Weight != nil {
				cs.Weights[i] = *r.Weight
			}
		}
	}
	return cs
}

// leaderSnapshot is the receipt's copy of l; nil for nil.
func leaderSnapshot(l *reputation.Lead) *receipt.LeaderSnapshot {
	if l == nil {
		return nil
	}
	return &receipt.LeaderSnapshot{Session: l.Session, Won: l.Won, Lost: l.Lost, Level: l.Level, Margin: l.Margin}
}

// pluralitySnapshot is the receipt's copy of p; nil for nil.
func pluralitySnapshot(p *Plurality) *receipt.PluralitySnapshot {
	if p == nil {
		return nil
	}
	return &receipt.PluralitySnapshot{Groups: slices.Clone(p.Groups), Coincidence: p.Coincidence, Reliability: p.Reliability}
}

// calibrationSnapshot is the receipt's copy of basis; nil for nil.
func calibrationSnapshot(b *reputation.Basis) *receipt.CalibrationSnapshot {
	if b == nil {
		return nil
	}
	c := &receipt.CalibrationSnapshot{Tier: b.Tier, Basis: b.Basis, Outcomes: b.Outcomes, Uncalibrated: b.Uncalibrated,
		Conservative: b.Conservative,
		Points:       make([]receipt.CalibrationPoint, len(b.Points))}
	for i, p := range b.Points {
		c.Points[i] = receipt.CalibrationPoint{Score: p.Score, Rate: p.Rate, Outcomes: p.Outcomes}
	}
	return c
}

// decisionReasons are the short reasons a receipt's decision records: the
// agreement, then up to three of the winning replicas' reasons.
func decisionReasons(resp *Response, final stepResult) []string {
	reasons := []string{fmt.Sprintf("agreement %.2f over %d replicas (%d spent in all)",
		resp.Evidence.Agreement, final.step.Replicas, resp.Evidence.Redundancy)}
	for i, r := range final.reasons {
		if i == 3 {
			break
		}
		reasons = append(reasons, r)
	}
	if resp.RetryInstructions != nil {
		reasons = append(reasons, resp.RetryInstructions.Reason)
	}
	if resp.Evidence.Judging != nil {
		reasons = append(reasons, resp.Evidence.Judging.reasons()...)
	}
	return reasons
}

// loneSnapshot is the receipt's copy of l; nil for nil.
func loneSnapshot(l *Lone) *receipt.LoneSnapshot {
	if l == nil {
		return nil
	}
	return &receipt.LoneSnapshot{Threshold: l.Threshold, Confidence: l.Confidence}
}
