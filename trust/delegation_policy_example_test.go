package trust_test

import (
	"context"
	"fmt"
	"log"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// An adaptive delegation answers VALID only when the confidence it
// states is above the plurality floor. Here three of five sessions answer
// 16: a strict majority, stated at consensus.Posterior(3, 2) = 0.656. At
// the default floor (one half) that is VALID; a host that acts only on
// answers it is at least 90% sure of gets RETRY, with the answer as a
// best effort and a reason naming both figures.
func ExampleWithPluralityFloor() {
	for _, floor := range []float64{trust.DefaultPluralityFloor, 0.9} {
		engine, err := router.NewEngine(routertest.Sessions(1, 5,
			routertest.Answer(16), routertest.Answer(13), routertest.Answer(16), routertest.Answer(21), routertest.Answer(16)))
		if err != nil {
			log.Fatal(err)
		}
		svc, err := trust.New(engine, trust.WithoutReputation(), trust.WithSessionPool(1, 2, 3, 4, 5), trust.WithPluralityFloor(floor))
		if err != nil {
			log.Fatal(err)
		}
		resp, err := svc.Call(context.Background(), &trust.Request{
			Mode:   trust.ModeDelegation,
			Policy: trust.PolicyAdaptive,
			Task:   trust.Task{Type: "qa", Input: router.NewStringInput("How many apples?")},
		})
		if err != nil {
			log.Fatal(err)
		}
		fmt.Printf("floor %v: %s %s at %d runs, confidence %.3f\n", floor, resp.Status, resp.Result, resp.Evidence.Launched, resp.Confidence)
		if ri := resp.RetryInstructions; ri != nil {
			fmt.Println(ri.Reason)
		}
	}
	// Output:
	// floor 0.5: VALID 16 at 5 runs, confidence 0.656
	// floor 0.9: RETRY 16 at 5 runs, confidence 0.656
	// the runs did not settle: the answer 3 of 5 runs gave states confidence 0.656, not above 0.9
}
