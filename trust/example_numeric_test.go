package trust_test

import (
	"context"
	"fmt"
	"log"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// A delegation that answers a number says so with task.answer "number":
// its runs then agree within task.tolerance around their median, and the
// result is the median as a JSON number. Here three sessions write 42 in
// three ways and a fourth is off by 0.3; adaptive settles on the first
// two runs that agree.
func Example_numericDelegation() {
	engine, err := router.NewEngine(routertest.Sessions(1, 4,
		routertest.Answer(42), routertest.Answer("42.0"), routertest.Answer(" 42 "), routertest.Answer(42.3)))
	if err != nil {
		log.Fatal(err)
	}
	svc, err := trust.New(engine, trust.WithSessionPool(1, 2, 3, 4))
	if err != nil {
		log.Fatal(err)
	}
	resp, err := svc.Call(context.Background(), &trust.Request{
		Mode:   trust.ModeDelegation,
		Policy: trust.PolicyAdaptive,
		Task: trust.Task{
			Type:      "qa",
			Input:     router.NewStringInput("What is six times seven?"),
			Answer:    trust.AnswerNumber,
			Tolerance: &router.Tolerance{Absolute: 0.5},
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.Status, string(resp.Result), resp.Evidence.Redundancy, resp.Confidence)
	// Output:
	// VALID 42 2 0.875
}
