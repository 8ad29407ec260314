package router_test

import (
	"context"
	"fmt"
	"log"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

// Five sessions estimate one number. Their answers differ in the last
// digit, and one writes it in words; consensus.aggregation "median"
// with a 1% tolerance settles on the median, as a JSON number, and says
// which answers agree with it.
func ExampleEngine_DelegateV3_median() {
	answers := []any{412, "409", 430, "about four hundred", 411.5}
	var sessions []router.Session
	for i, a := range answers {
		sessions = append(sessions, router.Session{ID: router.SessionID(i + 1), Worker: routertest.Answer(a)})
	}
	e, err := router.NewEngine(sessions)
	if err != nil {
		log.Fatal(err)
	}
	resp, err := e.DelegateV3(context.Background(), &router.DelegateV3Request{
		DelegateTask: router.DelegateTask{Objective: "How many seats does the hall have? Answer with a number."},
		Consensus: router.ConsensusRequest{
			Replicas:           5,
			Aggregation:        router.AggregationMedian,
			Tolerance:          &router.Tolerance{Relative: 0.01},
			DisagreementPolicy: router.DisagreeReturnAll,
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	c := resp.Consensus
	fmt.Printf("result %s, agreeing replicas %v, agreement %.2f, confidence %.3f\n", resp.Result, c.Agreeing, c.Agreement, c.Confidence)
	fmt.Println(resp.Evidence.Runs[3].Error)
	// Output:
	// result 411.5, agreeing replicas [0 1 4], agreement 0.75, confidence 0.812
	// no vote: consensus: not a number: the string "about four hundred" is not written as one JSON number
}
