package router_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

// A caller that makes several router calls for one decision reads the
// scope's reputation once and hands each call what it read: the engine
// weighs and records the sessions by that reading, without reading its
// book again.
func ExampleWithReading() {
	valid := routertest.Verdict(router.VerdictValid)
	e, err := router.NewEngine(routertest.Sessions(1, 2, valid, valid))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	scope := router.Scope(router.KindValidate, "summary")
	rel, evidence, err := e.Reputation().Evidence(ctx, scope, []int64{1, 2})
	if err != nil {
		log.Fatal(err)
	}
	ctx = router.WithReading(ctx, router.Reading{Scope: scope, Reliabilities: rel, Evidence: evidence})
	for _, id := range []router.SessionID{1, 2} {
		resp, err := e.ValidateV3(ctx, &router.ValidateV3Request{
			ValidateTask: router.ValidateTask{Claim: router.Claim{Type: "summary", Output: json.RawMessage(`"The report covers Q3."`)}},
			Consensus:    router.ConsensusRequest{Replicas: 1, SessionPool: []router.SessionID{id}, Aggregation: router.AggregationWeighted},
		})
		if err != nil {
			log.Fatal(err)
		}
		run := resp.Evidence.Runs[0]
		fmt.Printf("session %d: %s, reliability %.2f\n", run.SessionID, run.Label, *run.Reliability)
	}
	// Output:
	// session 1: VALID, reliability 0.80
	// session 2: VALID, reliability 0.80
}
