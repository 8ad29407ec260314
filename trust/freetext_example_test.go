package trust_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log"
	"slices"
	"strings"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/embedkey"
	"github.com/vouchkit/vouch/router/embedkey/embedkeytest"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// A judged delegation: four sessions word the same answer four ways, so
// that no two outputs are equal. One session answers; the three others
// judge its answer, and the call returns the answer they accept.
func ExampleDelegationOptions_judged() {
	answers := []string{
		"Marie Curie won the 1903 Nobel Prize in Physics together with Pierre Curie.",
		"In 1903 Marie Curie shared the Nobel Prize in Physics with Pierre Curie.",
		"The 1903 physics Nobel went to Marie Curie, with Pierre Curie and Henri Becquerel.",
		"Marie Curie: she was awarded the Nobel Prize in Physics in 1903.",
	}
	workers := make([]router.Worker, len(answers))
	for i, a := range answers {
		workers[i] = router.WorkerFunc(func(_ context.Context, job *router.Job) (*router.Result, error) {
			if job.Kind == router.KindDelegate {
				return &router.Result{Output: a}, nil
			}
			var claim string // a judge: does the answer name the 1903 laureate?
			_ = json.Unmarshal(job.Claim.Output, &claim)
			if strings.Contains(claim, "Marie Curie") && strings.Contains(claim, "1903") {
				return &router.Result{Verdict: router.VerdictValid, Confidence: 0.9}, nil
			}
			return &router.Result{Verdict: router.VerdictInvalid, Confidence: 0.9}, nil
		})
	}
	engine, err := router.NewEngine(routertest.Sessions(1, 1, workers...))
	if err != nil {
		log.Fatal(err)
	}
	svc, err := trust.New(engine, trust.WithSessionPool(1, 2, 3, 4))
	if err != nil {
		log.Fatal(err)
	}
	resp, err := svc.Call(context.Background(), &trust.Request{
		Mode: trust.ModeDelegation, Policy: trust.PolicySafe,
		Task:       trust.Task{Type: "qa", Input: router.NewStringInput("Who won the 1903 physics Nobel?")},
		Delegation: &trust.DelegationOptions{Agreement: trust.AgreementJudged},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.Status, string(resp.Result))
	for _, c := range resp.Evidence.Judging.Candidates {
		var judges []router.SessionID
		for _, j := range c.Judges {
			judges = append(judges, j.SessionID)
		}
		slices.Sort(judges)
		fmt.Printf("produced by session %d, judged by sessions %v: %s\n", c.SessionID, judges, c.Verdict)
	}
	fmt.Println("runs", resp.Evidence.Redundancy, "verdicts", resp.Evidence.Verdicts)
	// Output:
	// VALID "Marie Curie won the 1903 Nobel Prize in Physics together with Pierre Curie."
	// produced by session 1, judged by sessions [2 3 4]: VALID
	// runs 4 verdicts [OK VALID VALID VALID]
}

// A service that groups delegation outputs by meaning: three sessions word
// one answer three ways, and an embeddings endpoint (here a stand-in whose
// vectors encode the facts each answer states) puts them in one group.
func ExampleWithGrouper() {
	answers := []string{
		"Marie Curie won the 1903 Nobel Prize in Physics.",
		"Marie Curie received the 1903 Nobel Prize in Physics.",
		"Marie Curie was awarded the 1903 Nobel Prize in Physics.",
	}
	workers := make([]router.Worker, len(answers))
	for i, a := range answers {
		workers[i] = routertest.Fixed(router.Result{Output: a})
	}
	engine, err := router.NewEngine(routertest.Sessions(1, 1, workers...))
	if err != nil {
		log.Fatal(err)
	}
	embeddings := embedkeytest.NewServer(func(text string) []float64 {
		v := []float64{0, 0, 0, 0.1 * float64(len(text)%3)} // laureate, year, prize, wording
		for i, fact := range []string{"Marie Curie", "1903", "hysics"} {
			if strings.Contains(text, fact) {
				v[i] = 1
			}
		}
		return v
	})
	defer embeddings.Close()
	g, err := embedkey.New(embedkey.Config{BaseURL: embeddings.URL + "/v1", Model: "text-embedding-3-small"})
	if err != nil {
		log.Fatal(err)
	}
	svc, err := trust.New(engine, trust.WithGrouper(g))
	if err != nil {
		log.Fatal(err)
	}
	resp, err := svc.Call(context.Background(), &trust.Request{
		Mode: trust.ModeDelegation, Policy: trust.PolicySafe,
		Task: trust.Task{Type: "qa", Input: router.NewStringInput("Who won the 1903 physics Nobel?")},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.Status, "agreement", resp.Evidence.Agreement)
	fmt.Println("groups", resp.Evidence.Grouping.Groups, "threshold", resp.Evidence.Grouping.Threshold)
	// Output:
	// VALID agreement 1
	// groups [0 0 0] threshold 0.9
}
