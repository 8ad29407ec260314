package router

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/vouchkit/vouch/consensus"
)

// numericAggregator returns the aggregator of consensus.aggregation
// "median" or "median_of_means" under c's tolerance: the weighted median
// over rel when weighted, the replicas' sessions in launched.
func numericAggregator(c *ConsensusRequest, rel consensus.Reliabilities, launched []int64, weighted bool) consensus.Aggregator {
	var tol consensus.Tolerance
	if c.Tolerance != nil {
		tol = consensus.Tolerance{Absolute: c.Tolerance.Absolute, Relative: c.Tolerance.Relative}
	}
	if c.Aggregation == AggregationMedianOfMeans {
		return consensus.MedianOfMeans{Tolerance: tol}
	}
	m := consensus.Median{Tolerance: tol}
	if weighted {
		m.Reliabilities, m.Launched = &rel, launched
	}
	return m
}

// numericBlock adds to call what a numeric outcome records: the
// strategy, the tolerance, each replica's number and the aggregate in
// the consensus block, why an output that answered held no number in
// its run's error (such a run is no vote: it records no reliability nor
// weight, and the tempering does not count it), and the aggregate as the
// result. It does nothing for the other strategies.
func numericBlock(call *consensusCall, out consensus.Outcome) {
	if out.Strategy != consensus.StrategyMedian && out.Strategy != consensus.StrategyMedianOfMeans {
		return
	}
	b := &call.block
	b.Strategy = Aggregation(out.Strategy)
	b.Tolerance = &Tolerance{Absolute: out.Tolerance.Absolute, Relative: out.Tolerance.Relative}
	b.Numbers = make([]*float64, len(out.Votes))
	some := false
	for i, v := range out.Votes {
		if v.Label == "" || v.Label == consensus.LabelCancelled || v.Label.Failed() {
			continue
		}
		x, err := consensus.ParseNumber(v.Answer)
		if err != nil {
			call.runs[i].Error = fmt.Sprintf("no vote: %v", err)
			call.runs[i].Reliability, call.runs[i].Weight = nil, nil
			continue
		}
		b.Numbers[i], some = &x, true
	}
	if some {
		v := out.Value
		b.Aggregate = &v
		call.result, _ = json.Marshal(v) // a finite number always encodes
	}
	if b.Reputation != nil {
		weighed := 0 // the numbers, and the failed runs under negative evidence
		for _, r := range call.runs {
			if r.Weight != nil {
				weighed++
			}
		}
		b.Reputation.Tempering = consensus.Tempering(weighed, out.Correlation)
	}
}

// learningPolicy returns the policy the engine's reputation learns a
// call's votes under: p itself, but for a numeric outcome a Key that
// puts every number agreeing with the aggregate in one group, each other
// number in a group of its own value, and an output that holds no number
// in a group of its own answer, so that 18 and "18" back the same
// answer.
func learningPolicy(p consensus.Policy, out consensus.Outcome) consensus.Policy {
	if out.Strategy != consensus.StrategyMedian && out.Strategy != consensus.StrategyMedianOfMeans {
		return p
	}
	p.Key = func(answer any) (string, error) {
		x, err := consensus.ParseNumber(answer)
		switch {
		case err != nil:
			k, err := consensus.DefaultKey(answer)
			return "output " + k, err
		case out.Tolerance.Agrees(x, out.Value):
			return "agrees", nil
		}
		return "number " + strconv.FormatFloat(x, 'g', -1, 64), nil
	}
	return p
}
