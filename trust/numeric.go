package trust

import (
	"encoding/json"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/router"
)

// tolerance is the task.tolerance of a delegation that declares a
// numeric answer, within which its runs' numbers agree with their median;
// none when the task sets none.
func tolerance(req *Request) consensus.Tolerance {
	var tol consensus.Tolerance
	if t := req.Task.Tolerance; t != nil {
		tol = consensus.Tolerance{Absolute: t.Absolute, Relative: t.Relative}
	}
	return tol
}

// numericResult is the result of a numeric outcome: its median, a JSON
// number.
func numericResult(out consensus.Outcome) json.RawMessage {
	raw, _ := json.Marshal(out.Value) // a parsed number is finite
	return raw
}

// numericBlock adds to c, the pooled consensus block of adaptive, what a
// numeric outcome records, as the router's block does: the strategy,
// tolerance, each run's number and the median.
func numericBlock(c *router.ConsensusResponse, out consensus.Outcome) {
	if out.Strategy != consensus.StrategyMedian {
		return
	}
	c.Strategy = router.AggregationMedian
	c.Tolerance = &router.Tolerance{Absolute: out.Tolerance.Absolute, Relative: out.Tolerance.Relative}
	c.Numbers = make([]*float64, len(out.Votes))
	for i, v := range out.Votes {
		if v.Label == consensus.LabelCancelled || v.Label.Failed() {
			continue
		}
		if x, err := consensus.ParseNumber(v.Answer); err == nil {
			c.Numbers[i] = &x
			m := out.Value
			c.Aggregate = &m
		}
	}
}
