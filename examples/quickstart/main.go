// Command quickstart shows vouch's wire contract at work: it decodes sample
// requests, validates them, and prints what a router would answer for the
// invalid one.
package main

import (
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/vouchkit/vouch/internal/jsonbody"
	"github.com/vouchkit/vouch/router"
)

func main() {
	samples := []struct{ name, body string }{
		{"valid v3 validate", `{"claim":{"type":"summary","output":"Paris is the capital of France."},
			"policy":{"tier":"safe","rules":["non-hallucination"]},
			"consensus":{"replicas":3,"session_pool":["201","202","203"],"disagreement_policy":"best_effort"}}`},
		{"invalid v3 validate", `{"claim":{"type":"summary","output":null},
			"policy":{"tier":"adaptive"},
			"consensus":{"replicas":4,"aggregation":"weighted"}}`},
	}
	failed := false
	for _, s := range samples {
		var req router.ValidateV3Request
		err := jsonbody.Decode(strings.NewReader(s.body), 0, &req)
		if err == nil {
			err = req.Validate()
		}
		fmt.Printf("%s:\n", s.name)
		var rerr *router.Error
		switch {
		case err == nil:
			fmt.Printf("  ok: %d replicas over sessions %v\n", req.Consensus.Replicas, req.Consensus.SessionPool)
		case errors.As(err, &rerr):
			fmt.Printf("  %d %s\n", rerr.Status, rerr.Code)
			for _, fe := range rerr.Errors {
				fmt.Printf("  - %s (%s): %s\n", fe.Field, fe.Rule, fe.Message)
			}
		default:
			fmt.Printf("  unexpected error: %v\n", err)
			failed = true
		}
	}
	if failed {
		os.Exit(1)
	}
}
