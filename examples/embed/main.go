// Command embed is the README's program: the trust service on three of the
// host's own workers, a validation with an inline signed receipt, and the
// receipt's verification.
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

// keepsFigures judges a summary VALID when it keeps every number of the input.
func keepsFigures(_ context.Context, job *router.Job) (*router.Result, error) {
	input, _ := job.TaskInput.String()
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
	fmt.Println(resp.Status, res.Receipt.Decision.Reasons[1], "- receipt verified")
}
