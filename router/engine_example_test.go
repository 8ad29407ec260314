package router_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"strings"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

// The engine runs a version 3 validation on three sessions from two
// worker pools; one of the workers lies.
func ExampleEngine() {
	honest := routertest.Verdict(router.VerdictValid)
	e, err := router.NewEngine([]router.Session{
		{ID: 201, Worker: honest, Pool: "east"},
		{ID: 202, Worker: routertest.Lie(honest), Pool: "east"},
		{ID: 203, Worker: honest, Pool: "west"},
	})
	if err != nil {
		log.Fatal(err)
	}
	resp, err := e.ValidateV3(context.Background(), &router.ValidateV3Request{
		ValidateTask: router.ValidateTask{
			Claim: router.Claim{Type: "summary", Output: json.RawMessage(`"The report covers Q3."`)},
		},
		Consensus: router.ConsensusRequest{Replicas: 3, DisagreementPolicy: router.DisagreeReturnAll},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("verdict:", resp.Verdict)
	fmt.Printf("agreement: %.2f\n", resp.Consensus.Agreement)
	for _, run := range resp.Evidence.Runs {
		fmt.Println("session", run.SessionID, run.Label)
	}
	// Output:
	// verdict: VALID
	// agreement: 0.67
	// session 201 VALID
	// session 203 VALID
	// session 202 INVALID
}

// A host worker is an ordinary function; the engine runs it on the
// session a version 2 request names.
func ExampleEngine_DelegateV2() {
	upper := router.WorkerFunc(func(ctx context.Context, job *router.Job) (*router.Result, error) {
		text, ok := job.Input.String()
		if !ok {
			return nil, errors.New("want a string input")
		}
		return &router.Result{
			Output: strings.ToUpper(text),
			Steps:  []router.Step{{Description: "upper-case the input"}},
		}, nil
	})
	e, err := router.NewEngine([]router.Session{{ID: 7, Worker: upper}})
	if err != nil {
		log.Fatal(err)
	}
	resp, err := e.DelegateV2(context.Background(), &router.DelegateV2Request{
		SessionID: 7,
		DelegateTask: router.DelegateTask{
			Objective: "shout",
			Input:     router.NewStringInput("hello"),
			Execution: router.Execution{MaxSteps: 2},
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(string(resp.Result), len(resp.Evidence.Steps), resp.Evidence.Configuration.MaxSteps)
	// Output: "HELLO" 1 2
}

// A fail_hard disagreement is an *router.Error that still carries every
// run and the consensus block.
func ExampleEngine_ValidateV3_failHard() {
	e, err := router.NewEngine(routertest.Sessions(1, 3,
		routertest.Verdict(router.VerdictValid),
		routertest.Verdict(router.VerdictInvalid),
		routertest.Verdict(router.VerdictValid),
	))
	if err != nil {
		log.Fatal(err)
	}
	_, err = e.ValidateV3(context.Background(), &router.ValidateV3Request{
		ValidateTask: router.ValidateTask{Claim: router.Claim{Type: "summary", Output: json.RawMessage(`"x"`)}},
		Consensus:    router.ConsensusRequest{Replicas: 3, DisagreementPolicy: router.DisagreeFailHard},
	})
	var rerr *router.Error
	if errors.As(err, &rerr) {
		var extra struct {
			Runs []router.Run `json:"runs"`
		}
		json.Unmarshal(rerr.Extra, &extra)
		fmt.Println(rerr.Status, rerr.Code, len(extra.Runs))
	}
	// Output: 409 disagreement 3
}

// One caller making nine calls while another makes one teaches the
// engine's book as if it had made about as many: over the latest calls,
// no caller supplies more than half of what the book learns while another
// teaches too. The engine asks Teach of each call; a caller alone would
// teach every call.
func ExampleWithCallerShare() {
	e, err := router.NewEngine([]router.Session{{ID: 1, Worker: routertest.Verdict(router.VerdictValid)}},
		router.WithCallerShare(0.5))
	if err != nil {
		log.Fatal(err)
	}
	alice := router.WithCaller(context.Background(), "key:alice")
	mallory := router.WithCaller(context.Background(), "key:mallory")
	fmt.Println("alice's call teaches:", e.Teach(alice))
	taught := 0
	for range 9 {
		if e.Teach(mallory) {
			taught++
		}
	}
	fmt.Println("mallory's calls that teach:", taught, "of 9")
	// Output:
	// alice's call teaches: true
	// mallory's calls that teach: 2 of 9
}
