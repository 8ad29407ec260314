package router_test

import (
	"encoding/json"
	"errors"
	"fmt"

	"github.com/vouchkit/vouch/router"
)

// A version 3 validate request is decoded and validated before it is run.
// An invalid one yields an *router.Error whose Errors name each failing
// member by its JSON path.
func ExampleValidateV3Request_Validate() {
	bodies := []string{
		`{"claim": {"type": "summary", "output": "Revenue rose 12%."},
		  "policy": {"tier": "safe"},
		  "consensus": {"replicas": 3, "session_pool": ["201", "202", "203"]}}`,
		`{"claim": {"type": "summary"},
		  "policy": {"tier": "adaptive"},
		  "consensus": {"replicas": 2, "session_pool": ["201", "201"], "aggregation": "median"}}`,
	}
	for _, body := range bodies {
		var req router.ValidateV3Request
		if err := json.Unmarshal([]byte(body), &req); err != nil {
			fmt.Println("decoding:", err)
			continue
		}
		err := req.Validate()
		var rerr *router.Error
		if !errors.As(err, &rerr) {
			fmt.Printf("valid: %d replicas over sessions %v\n", req.Consensus.Replicas, req.Consensus.SessionPool)
			continue
		}
		fmt.Println("invalid:", rerr.Status, rerr.Code)
		for _, fe := range rerr.Errors {
			fmt.Printf("  %s (%s): %s\n", fe.Field, fe.Rule, fe.Message)
		}
	}
	// Output:
	// valid: 3 replicas over sessions [201 202 203]
	// invalid: 400 invalid_request
	//   claim.output (present): is required and must not be null
	//   policy.tier (tier): "adaptive" is a trust-service tier; the router takes fast, safe, oracle or balanced
	//   consensus.replicas (oneof): must be one of 1, 3, 5, got 2
	//   consensus.session_pool (unique): must not repeat a value
	//   consensus.aggregation (delegate_only): "median" aggregates the numbers delegations answer; a validate votes verdicts: use "majority" or "weighted"
}
