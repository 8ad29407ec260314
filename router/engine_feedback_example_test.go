package router_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

// A weighted version 3 call states a confidence read on the calibration
// map of CalibrationTier, learned from the outcomes the host reports by
// the trace id each call ran under. Before any report the call states
// its conservative number; after four reports that the calls were right,
// the number the outcomes support, which the response's calibration basis
// names with the map's points.
func ExampleEngine_Feedback() {
	valid := routertest.Verdict(router.VerdictValid)
	e, err := router.NewEngine(routertest.Sessions(1, 3, valid, valid, valid))
	if err != nil {
		log.Fatal(err)
	}
	call := func(traceID string) *router.ValidateV3Response {
		resp, err := e.ValidateV3(router.WithTraceID(context.Background(), traceID), &router.ValidateV3Request{
			ValidateTask: router.ValidateTask{Claim: router.Claim{Type: "summary", Output: json.RawMessage(`"The report covers Q3."`)}},
			Consensus:    router.ConsensusRequest{Replicas: 3, Aggregation: router.AggregationWeighted},
		})
		if err != nil {
			log.Fatal(err)
		}
		return resp
	}
	resp := call("4bf92f3577b34da6a3ce929d0e0e4736")
	fmt.Println(resp.Consensus.Calibration.Basis, resp.Consensus.Confidence)

	for _, id := range []string{"4bf92f3577b34da6a3ce929d0e0e4737", "4bf92f3577b34da6a3ce929d0e0e4738", "4bf92f3577b34da6a3ce929d0e0e4739", "4bf92f3577b34da6a3ce929d0e0e473a"} {
		call(id)
		if err := e.Feedback(context.Background(), id, true); err != nil {
			log.Fatal(err)
		}
	}
	resp = call("4bf92f3577b34da6a3ce929d0e0e473b")
	b := resp.Consensus.Calibration
	fmt.Printf("%s on %g outcomes: %.4f (recomputed %.4f)\n", b.Basis, b.Outcomes, resp.Consensus.Confidence, b.Read())
	// Output:
	// uncalibrated 0.9375
	// outcomes on 4 outcomes: 0.9732 (recomputed 0.9732)
}
