package router

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"strings"

	"github.com/go-playground/validator/v10"

	"github.com/vouchkit/vouch/internal/httpapi"
	"github.com/vouchkit/vouch/internal/valid"
	"github.com/vouchkit/vouch/problem"
)

// validate holds the rules of the wire types. It is built once and only
// read afterwards (it caches struct metadata, as encoding/json does).
var validate = valid.New(map[string]valid.Rule{
	// text: a required text member, or an item of a list of names
	// (tools, rules), holds more than white space, which would give a
	// worker an empty prompt, claim, label or name.
	"text": {
		Check: func(fl validator.FieldLevel) bool {
			return strings.TrimSpace(fl.Field().String()) != ""
		},
		Message: func(string, any) string { return "must hold text, not white space only" },
	},
	// tier: the router's tiers. adaptive is named apart because it is a
	// trust-service tier, which a caller may easily send here by mistake.
	"tier": {
		Check: func(fl validator.FieldLevel) bool {
			switch Tier(fl.Field().String()) {
			case TierFast, TierSafe, TierOracle, TierBalanced:
				return true
			}
			return false
		},
		Message: func(_ string, v any) string {
			if Tier(fmt.Sprint(v)) == TierAdaptive {
				return `"adaptive" is a trust-service tier; the router takes fast, safe, oracle or balanced`
			}
			return fmt.Sprintf("must be one of fast, safe, oracle, balanced, got %q", v)
		},
	},
	// aggregation: the interface names later strategies that are not available.
	"aggregation": {
		Check: func(fl validator.FieldLevel) bool {
			switch Aggregation(fl.Field().String()) {
			case AggregationMajority, AggregationWeighted, AggregationMedian, AggregationMedianOfMeans:
				return true
			}
			return false
		},
		Message: func(_ string, v any) string {
			if Aggregation(fmt.Sprint(v)) == AggregationModelEnsemble {
				return fmt.Sprintf("%q is named for a later version but not yet available; use \"majority\", \"weighted\", \"median\" or \"median_of_means\"", v)
			}
			return fmt.Sprintf("must be \"majority\", \"weighted\", \"median\" or \"median_of_means\", got %q", v)
		},
	},
	// strategy: the public router's name for aggregation; whether it
	// names the aggregation run is checked by ConsensusRequest.strategy.
	// Only "" fails here, so that a strategy sent empty is refused
	// rather than read as absent.
	"strategy": {
		Check: func(fl validator.FieldLevel) bool { return fl.Field().String() != "" },
		Message: func(string, any) string {
			return "is the public router's name for consensus.aggregation: name the aggregation run"
		},
	},
	// weight_by: only the reputation the router learns weighs votes.
	"weight_by": {
		Check: func(fl validator.FieldLevel) bool {
			return WeightBy(fl.Field().String()) == WeightByReputation
		},
		Message: func(_ string, v any) string {
			switch WeightBy(fmt.Sprint(v)) {
			case WeightByStake, WeightByLatency, WeightByCost:
				return fmt.Sprintf("%q is named by the interface but not available; use \"reputation\"", v)
			}
			return fmt.Sprintf("must be \"reputation\", got %q", v)
		},
	},
	// present: a JSON value that is there and is not null.
	"present": {
		Check: func(fl validator.FieldLevel) bool {
			f := fl.Field()
			if f.Kind() != reflect.Slice {
				return !f.IsZero()
			}
			b := bytes.TrimSpace(f.Bytes())
			return len(b) > 0 && !bytes.Equal(b, []byte("null"))
		},
		Message: func(string, any) string { return "is required and must not be null" },
	},
})

// check runs the tag rules and the extra ones and returns a 400 *Error.
func check(v any, extra ...problem.FieldError) error {
	errs := append(validate.Struct(v), extra...)
	if len(errs) == 0 {
		return nil
	}
	return problem.Invalid(errs)
}

// singleSession rejects redundancy 3 or 5 in a version 2 delegate request.
// Other values are left to the oneof rule, so that one mistake gives one
// error. (A version 2 validate request runs that many replicas instead.)
func singleSession(redundancy int) []problem.FieldError {
	if redundancy == Replicas3 || redundancy == Replicas5 {
		return []problem.FieldError{{
			Field: "policy.redundancy", Rule: "single_session",
			Message: "version 2 delegate runs on one session; use the version 3 endpoint with consensus.replicas for redundancy",
		}}
	}
	return nil
}

// redundancyNote is the note of a version 3 response whose request set a
// policy.redundancy other than consensus.replicas: the consensus block
// governs, and the response says so rather than refusing the request.
func redundancyNote(redundancy, replicas int) []string {
	if redundancy == 0 || redundancy == replicas {
		return nil
	}
	return []string{fmt.Sprintf("policy.redundancy %d ignored: consensus.replicas %d governs", redundancy, replicas)}
}

// Validate reports whether r is a valid request. The error is an *Error
// with status 400 listing every failing field by JSON path.
func (r *DelegateV1Request) Validate() error { return check(r) }

// Validate reports whether r is a valid request, as DelegateV1Request.Validate.
func (r *ValidateV1Request) Validate() error { return check(r) }

// Validate reports whether r is a valid request, as DelegateV1Request.Validate.
// policy.redundancy, when set, is 3 or 5: a fact check runs at least three
// replicas.
func (r *FactcheckV1Request) Validate() error {
	var extra []problem.FieldError
	if r.Policy.Redundancy == Replicas1 {
		extra = append(extra, problem.FieldError{
			Field: "policy.redundancy", Rule: "min_redundancy",
			Message: "a fact check runs at least 3 replicas: use 3 (the default) or 5",
		})
	}
	return check(r, extra...)
}

// Validate reports whether r is a valid request, as DelegateV1Request.Validate.
func (r *DelegateV2Request) Validate() error {
	return check(r, singleSession(r.Policy.Redundancy)...)
}

// Validate reports whether r is a valid request, as DelegateV1Request.Validate.
// policy.redundancy 3 or 5 runs that many replicas (see
// [Engine.ValidateV2]).
// context.task_input, when set, is an input (see [Job]).
func (r *ValidateV2Request) Validate() error { return check(r, r.taskInput()...) }

// Validate reports whether r is a valid request, as DelegateV1Request.Validate.
// A policy.redundancy other than consensus.replicas is not an error:
// consensus.replicas governs, and the response notes it.
// consensus.tolerance is refused outside "median" and "median_of_means".
func (r *DelegateV3Request) Validate() error {
	return check(r, slices.Concat(r.Consensus.weightBy(), r.Consensus.strategy(), r.Consensus.numeric(KindDelegate))...)
}

// Validate reports whether r is a valid request, as DelegateV1Request.Validate.
// A policy.redundancy other than consensus.replicas is not an error, as
// for DelegateV3Request.
// The numeric aggregations are refused: verdicts are no numbers.
// context.task_input, when set, is an input, as for ValidateV2Request.
func (r *ValidateV3Request) Validate() error {
	return check(r, slices.Concat(r.taskInput(), r.Consensus.weightBy(), r.Consensus.strategy(), r.Consensus.numeric(KindValidate))...)
}

// Validate reports whether r is a valid request, as DelegateV1Request.Validate.
// A policy.redundancy other than consensus.replicas is not an error, as
// for DelegateV3Request.
// The numeric aggregations are refused, as for ValidateV3Request.
func (r *FactcheckRequest) Validate() error {
	return check(r, slices.Concat(r.Consensus.weightBy(), r.Consensus.strategy(), r.Consensus.numeric(KindFactcheck))...)
}

// weightBy refuses a consensus.weight_by without aggregation "weighted"
// or "median", which would weigh nothing.
func (c *ConsensusRequest) weightBy() []problem.FieldError {
	if c.WeightBy == "" || c.Aggregation == AggregationWeighted || c.Aggregation == AggregationMedian {
		return nil
	}
	return []problem.FieldError{{
		Field: "consensus.weight_by", Rule: "weighted_only",
		Message: `applies only to consensus.aggregation "weighted" or "median"`,
	}}
}

// strategy refuses a consensus.strategy other than the aggregation run,
// which would be ignored.
func (c *ConsensusRequest) strategy() []problem.FieldError {
	run := cmp.Or(c.Aggregation, AggregationMajority)
	if c.Strategy == "" || c.Strategy == run {
		return nil
	}
	return []problem.FieldError{{
		Field: "consensus.strategy", Rule: "eqfield",
		Message: fmt.Sprintf("is the public router's name for consensus.aggregation, which is %q here; send the aggregation wanted as consensus.aggregation", run),
	}}
}

// misplacedPool is the field error of a version 3 body that puts
// session_pool at the top level, where the router would ignore it as an
// unknown member and draw from every session instead of the ones the
// caller listed.
var misplacedPool = problem.FieldError{
	Field: "session_pool", Rule: "misplaced",
	Message: "belongs inside the consensus block: send it as consensus.session_pool",
}

// refusingKnownMistakes wraps the decoder of a version 3 body so that a
// top-level session_pool, refused as every unknown member is, says where
// it belongs: inside the consensus block, where it names the sessions the
// caller meant instead of every session. The detail is written again from
// the field errors, so that it says the same.
func refusingKnownMistakes(d decoder) decoder {
	return func(svc Service, body []byte) (httpapi.Run, error) {
		run, err := d(svc, body)
		var p *Error
		if errors.As(err, &p) && p.Code == problem.CodeInvalidRequest {
			replaced := false
			for i, fe := range p.Errors {
				if fe.Field == misplacedPool.Field && fe.Rule == "unknown" {
					p.Errors[i] = misplacedPool
					replaced = true
				}
			}
			if replaced {
				p.Detail = problem.Invalid(p.Errors).Detail
			}
		}
		return run, err
	}
}
