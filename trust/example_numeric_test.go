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

// Over a router that keeps reputation, a numeric delegation's confidence
// is calibrated on the outcomes its host reports, on a map of the tier's
// numeric calls of its own (trust.NumericCalibrationSuffix). Before any
// outcome it is the Posterior of the median's counts; after four calls
// that turned out wrong, the same two agreeing runs state less.
func Example_numericCalibration() {
	engine, err := router.NewEngine(routertest.Sessions(1, 2, routertest.Answer(42), routertest.Answer("42.0")))
	if err != nil {
		log.Fatal(err)
	}
	svc, err := trust.New(engine, trust.WithSessionPool(1, 2))
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	call := func() *trust.Response {
		resp, err := svc.Call(ctx, &trust.Request{
			Mode:   trust.ModeDelegation,
			Policy: trust.PolicyAdaptive,
			Task:   trust.Task{Type: "qa", Input: router.NewStringInput("What is six times seven?"), Answer: trust.AnswerNumber},
		})
		if err != nil {
			log.Fatal(err)
		}
		return resp
	}
	resp := call()
	c := resp.Evidence.Calibration
	fmt.Println(c.Tier, c.Basis, resp.Confidence)
	for range 4 {
		if err := svc.Feedback(ctx, call().TraceID, false); err != nil {
			log.Fatal(err)
		}
	}
	resp = call()
	c = resp.Evidence.Calibration
	fmt.Printf("%s %s %.4f\n", c.Tier, c.Basis, resp.Confidence)
	// Output:
	// adaptive/number uncalibrated 0.875
	// adaptive/number outcomes 0.4375
}
