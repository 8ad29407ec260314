// Command embed validates a claim on the host's own workers and verifies its receipt.
package main

import (
	"context"
	"crypto/ed25519"
	"fmt"
	"log"
	"strings"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// keepsFigures judges a summary VALID when it keeps every number of the input
// text, and asks for a text input and a claim (NEEDS_SPEC) when it has none.
func keepsFigures(_ context.Context, job *router.Job) (*router.Result, error) {
	input, ok := job.TaskInput.String()
	if !ok || job.Claim == nil {
		return &router.Result{Verdict: router.VerdictNeedsSpec, Reasons: []string{"no text and claim to judge"}}, nil
	}
	for _, w := range strings.Fields(input) {
		if w = strings.Trim(w, ".,"); strings.ContainsAny(w, "0123456789") && !strings.Contains(string(job.Claim.Output), w) {
			return &router.Result{Verdict: router.VerdictInvalid, Reasons: []string{"drops " + w}}, nil
		}
	}
	return &router.Result{Verdict: router.VerdictValid, Reasons: []string{"keeps every figure"}}, nil
}

func main() {
	judge := router.WorkerFunc(keepsFigures)
	engine, err := router.NewEngine([]router.Session{{ID: 1, Worker: judge}, {ID: 2, Worker: judge}, {ID: 3, Worker: judge}})
	if err != nil {
		log.Fatal(err)
	}
	public, private, _ := ed25519.GenerateKey(nil)
	svc, err := trust.New(engine, trust.WithSigningKey(private))
	if err != nil {
		log.Fatal(err)
	}
	resp, err := svc.Call(context.Background(), &trust.Request{
		Mode: trust.ModeValidation, Policy: trust.PolicySafe, Receipt: receipt.Inline(),
		Task: trust.Task{Input: router.NewStringInput("Refunds within 30 days, at most 2 a year."), ClaimedResult: trust.JSON("Refunds within 30 days.")},
	})
	if err != nil {
		log.Fatal(err)
	}
	res, err := receipt.Verify(resp.Receipt, receipt.Ed25519Key(public))
	if err != nil {
		log.Fatal(err)
	}
	d := res.Receipt.Decision
	fmt.Printf("%s, confidence %.2f: %s\n", resp.Status, resp.Confidence, d.Reasons[1])
	fmt.Printf("receipt verified (%s): agreement %.2f over %d replicas\n", res.Scheme, d.Agreement.Share, d.Agreement.Replicas)
}
