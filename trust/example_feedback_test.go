package trust_test

import (
	"context"
	"fmt"
	"log"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// The host reports what it later learned of a call's outcome (an audit, a
// dispute, a human review) by the call's trace id, and the outcomes
// calibrate the confidence of the calls that follow: a validation's
// confidence is read on the map of its tier and verdict. Before any
// report, two agreeing votes state no more than equal votes would (7/8);
// after four audited calls all turned out right, they state what the map
// learned, and the response carries the map's points, so that anyone
// holding it recomputes the number (reputation.Basis.Read). Each audit
// also examines its claim (see Service.FeedbackVerdict): the three
// sessions answer it again, and their records learn from it too.
func ExampleService_Feedback() {
	judge := router.WorkerFunc(keepsFigures)
	engine, err := router.NewEngine(routertest.Sessions(1, 3, judge, judge, judge))
	if err != nil {
		log.Fatal(err)
	}
	svc, err := trust.New(engine)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	call := func() *trust.Response {
		resp, err := svc.Call(ctx, &trust.Request{
			Mode:   trust.ModeValidation,
			Policy: trust.PolicyAdaptive,
			Task:   trust.Task{Type: "summary", Input: router.NewStringInput("Refunds within 30 days."), ClaimedResult: trust.JSON("Refunds within 30 days.")},
		})
		if err != nil {
			log.Fatal(err)
		}
		return resp
	}
	resp := call()
	c := resp.Evidence.Calibration
	fmt.Println(resp.Status, resp.Confidence, c.Tier, c.Basis)

	for range 4 { // the host audits four calls: each VALID was right
		if err := svc.Feedback(ctx, call().TraceID, true); err != nil {
			log.Fatal(err)
		}
	}
	resp = call()
	c = resp.Evidence.Calibration
	fmt.Printf("%s %.4f %s %s on %g outcomes\n", resp.Status, resp.Confidence, c.Tier, c.Basis, c.Outcomes)
	fmt.Printf("recomputed: %.4f\n", c.Read())
	// Output:
	// VALID 0.875 adaptive/VALID uncalibrated
	// VALID 0.9359 adaptive/VALID outcomes on 4 outcomes
	// recomputed: 0.9359
}

// A call that answered RETRY has no answer to call right or wrong, but a
// host that learns whether its claim held reports the claim's true
// verdict, and the call's votes teach all the same: here oracle refused
// one dissent among five, and the dissenting session turned out right.
// The report examines the claim: the service asks it of the five again,
// at the oracle tier, and reports the verdict on that call too. The
// exam's votes repeat the call's, and each session learns the claim's
// one outcome once, four votes' worth (reputation.DefaultFeedbackWeight),
// against the prior's Beta(32, 8): the dissenting session's reliability
// rises from 0.8 to 36/44, and the others' fall to 32/44.
func ExampleService_FeedbackVerdict() {
	agrees, dissents := routertest.Verdict(router.VerdictValid), routertest.Verdict(router.VerdictInvalid)
	engine, err := router.NewEngine(routertest.Sessions(1, 2, agrees, agrees, agrees, agrees, dissents))
	if err != nil {
		log.Fatal(err)
	}
	svc, err := trust.New(engine)
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	resp, err := svc.Call(ctx, &trust.Request{
		Mode:   trust.ModeValidation,
		Policy: trust.PolicyOracle,
		Task:   trust.Task{Type: "summary", Input: router.NewStringInput("Refunds within 30 days."), ClaimedResult: trust.JSON("Refunds within 60 days.")},
	})
	if err != nil {
		log.Fatal(err)
	}
	votes := map[router.Label]int{}
	for _, v := range resp.Evidence.Verdicts {
		votes[v]++
	}
	fmt.Println(resp.Status, votes)

	// An audit finds the claim wrong.
	if err := svc.FeedbackVerdict(ctx, resp.TraceID, router.VerdictInvalid); err != nil {
		log.Fatal(err)
	}
	rel, err := engine.Reputation().Reliabilities(ctx, router.Scope(router.KindValidate, "summary"), []int64{1, 5})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("session 1: %.3f, session 5: %.3f\n", rel.Sessions[1], rel.Sessions[5])
	// Output:
	// RETRY map[INVALID:1 VALID:4]
	// session 1: 0.727, session 5: 0.818
}
