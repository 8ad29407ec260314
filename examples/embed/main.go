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
	"time"

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
	_, key, _ := ed25519.GenerateKey(nil)
	signer, _ := receipt.NewEd25519Signer(key)
	svc, err := trust.New(engine, trust.WithReceipts(&receipt.Issuer{Signer: signer, Store: &receipt.MemStore{}}))
	if err != nil {
		log.Fatal(err)
	}
	input := router.NewStringInput("Refunds within 30 days, at most 2 a year.")
	resp, err := svc.Call(context.Background(), &trust.Request{
		Mode: trust.ModeValidation, Policy: trust.PolicySafe,
		Task:    trust.Task{Input: input, ClaimedResult: trust.JSON("Refunds within 30 days.")},
		Receipt: receipt.Request{Mode: receipt.DeliveryInline, Include: receipt.Include{InputHash: true, OutputHash: true}},
	})
	if err != nil {
		log.Fatal(err)
	}
	verifier, _ := receipt.NewVerifier([]receipt.PublicKey{signer.Public()})
	res, err := verifier.Verify(resp.Receipt, receipt.Originals{Input: input.Raw(), Output: resp.Result}, time.Now())
	fmt.Println(resp.Status, res.Receipt.Decision.Reasons[1], "- receipt verified:", err == nil && res.Valid())
}
