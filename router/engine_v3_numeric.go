package router

import (
	"encoding/json"
	"fmt"

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
// its run's error, and the aggregate as the result. It does nothing for
// the other strategies.
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
		b.Reputation.Tempering = consensus.Tempering(out.Agreeing+out.Against, out.Correlation)
	}
}
