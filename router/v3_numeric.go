package router

import (
	"fmt"
	"math"

	"github.com/vouchkit/vouch/problem"
)

// numericAggregation reports whether a aggregates numbers.
func numericAggregation(a Aggregation) bool {
	return a == AggregationMedian || a == AggregationMedianOfMeans
}

// numeric checks the numeric members of a consensus block of a job of
// kind k: the numeric aggregations only for a delegation, a tolerance
// only with them, and its bounds finite (the tag rules refuse negative
// ones).
func (c *ConsensusRequest) numeric(k Kind) []problem.FieldError {
	var errs []problem.FieldError
	if numericAggregation(c.Aggregation) && k != KindDelegate {
		errs = append(errs, problem.FieldError{
			Field: "consensus.aggregation", Rule: "delegate_only",
			Message: fmt.Sprintf("%q aggregates the numbers delegations answer; a %s votes verdicts: use \"majority\" or \"weighted\"", c.Aggregation, k),
		})
	}
	if c.Tolerance == nil {
		return errs
	}
	if !numericAggregation(c.Aggregation) {
		errs = append(errs, problem.FieldError{
			Field: "consensus.tolerance", Rule: "numeric_only",
			Message: `applies only to consensus.aggregation "median" or "median_of_means"`,
		})
	}
	for _, b := range []struct {
		field string
		v     float64
	}{{"consensus.tolerance.absolute", c.Tolerance.Absolute}, {"consensus.tolerance.relative", c.Tolerance.Relative}} {
		if math.IsInf(b.v, 1) {
			errs = append(errs, problem.FieldError{Field: b.field, Rule: "finite", Message: "must be a finite number ≥ 0"})
		}
	}
	return errs
}
