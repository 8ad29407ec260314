// Command marketplace shows validate-before-settlement: a marketplace holds
// a buyer's payment in escrow, asks the trust service to validate what the
// seller delivered, pays the seller only on VALID, keeps a detached receipt
// of every decision, and arbitrates when the buyer disputes.
//
//	go run ./examples/marketplace
package main

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// A job is an order on the marketplace: the buyer's task, the seller's
// delivery, and the escrowed price in cents.
type job struct {
	id       string
	task     string // what the buyer asked, as the input text
	spec     string
	delivery string
	price    int
	dispute  string // the buyer's complaint, if any
}

func main() {
	if err := run(context.Background(), os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "marketplace:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer) error {
	// The marketplace embeds the trust service on its own workers: here,
	// deterministic judges that accept a delivery only when it keeps every
	// figure of the source text.
	engine, err := router.NewEngine(routertest.Sessions(1, 2, judge(), judge(), judge(), judge(), judge()))
	if err != nil {
		return err
	}
	_, key, err := ed25519.GenerateKey(nil)
	if err != nil {
		return err
	}
	signer, err := receipt.NewEd25519Signer(key)
	if err != nil {
		return err
	}
	receipts := &receipt.MemStore{}
	svc, err := trust.New(engine, trust.WithReceipts(&receipt.Issuer{Signer: signer, Store: receipts}), trust.WithSignedReceipts())
	if err != nil {
		return err
	}
	m := &market{svc: svc, out: out, balances: map[string]int{}}

	source := "Revenue rose 12% to $4.1 billion in 2025; operating margin was 18%."
	jobs := []job{
		{id: "job-1", task: source, spec: "Summarize, keeping every figure.", delivery: "Revenue grew 12% to $4.1 billion in 2025, with an 18% operating margin.", price: 500},
		{id: "job-2", task: source, spec: "Summarize, keeping every figure.", delivery: "Revenue grew strongly in 2025.", price: 500},
		{id: "job-3", task: source, spec: "Summarize, keeping every figure.", delivery: "Revenue rose 12% to $4.1 billion in 2025; margin 18%.", price: 500,
			dispute: "the summary drops the word 'operating'"},
	}
	for _, j := range jobs {
		if err := m.settle(ctx, j); err != nil {
			return err
		}
	}
	fmt.Fprintf(out, "\nseller balance: %d cents; buyer refunds: %d cents; %d receipts kept\n",
		m.balances["seller"], m.balances["buyer"], len(m.kept))
	return nil
}

type market struct {
	svc      *trust.Service
	out      io.Writer
	balances map[string]int
	kept     []string // receipt ids
}

// settle validates a delivery before releasing the escrow; a disputed job
// is arbitrated instead.
func (m *market) settle(ctx context.Context, j job) error {
	delivery, _ := json.Marshal(j.delivery)
	spec, _ := json.Marshal(j.spec)
	req := &trust.Request{
		Mode:     trust.ModeValidation,
		Policy:   trust.PolicySafe,
		Task:     trust.Task{Type: "summarization", Input: router.NewStringInput(j.task), Spec: spec, ClaimedResult: delivery},
		Metadata: map[string]any{"job_id": j.id},
		Receipt: receipt.Request{Mode: receipt.DeliveryDetached, Visibility: receipt.VisibilityShared,
			Counterparties: []string{"buyer", "seller"}, Include: receipt.Include{OutputHash: true, ConsensusSnapshot: true}},
	}
	if j.dispute != "" {
		req.Mode = trust.ModeArbitration
		req.Task.DisputeContext, _ = json.Marshal(map[string]string{"buyer": j.dispute})
	}
	resp, err := m.svc.Call(trust.WithCaller(ctx, "marketplace"), req)
	if err != nil {
		return fmt.Errorf("%s: %w", j.id, err)
	}
	var ref receipt.Ref
	if err := json.Unmarshal(resp.Receipt, &ref); err != nil {
		return fmt.Errorf("%s: reading the receipt reference: %w", j.id, err)
	}
	m.kept = append(m.kept, ref.ReceiptID)

	var action string
	switch resp.Status {
	case trust.StatusValid, trust.StatusSellerValid:
		m.balances["seller"] += j.price
		action = "escrow released to the seller"
	case trust.StatusInvalid, trust.StatusSellerInvalid:
		m.balances["buyer"] += j.price
		action = "escrow refunded to the buyer"
	default:
		action = "escrow held; " + retryAdvice(resp)
	}
	fmt.Fprintf(m.out, "%s (%s): %s, confidence %.2f, %d replicas\n  %s\n  receipt %s (shared with buyer and seller, %s)\n",
		j.id, req.Mode, resp.Status, resp.Confidence, resp.Evidence.Redundancy, action, ref.ReceiptID, ref.TTL)
	return nil
}

func retryAdvice(resp *trust.Response) string {
	if resp.RetryInstructions == nil {
		return "no advice"
	}
	return "retry with " + string(resp.RetryInstructions.Policy) + ": " + resp.RetryInstructions.Reason
}

// judge accepts a delivery when it keeps every figure (a token with a
// digit) of the source text.
func judge() router.Worker {
	return router.WorkerFunc(func(_ context.Context, job *router.Job) (*router.Result, error) {
		var delivery string
		if job.Claim == nil || json.Unmarshal(job.Claim.Output, &delivery) != nil {
			return &router.Result{Verdict: router.VerdictNeedsSpec, Confidence: 0.9, Reasons: []string{"no text delivery to judge"}}, nil
		}
		text, _ := job.TaskInput.String()
		for _, f := range strings.Fields(text) {
			f = strings.Trim(f, ".,;:")
			if strings.ContainsAny(f, "0123456789") && !strings.Contains(delivery, f) {
				return &router.Result{Verdict: router.VerdictInvalid, Confidence: 0.95, Reasons: []string{"drops the figure " + f}}, nil
			}
		}
		return &router.Result{Verdict: router.VerdictValid, Confidence: 0.95, Reasons: []string{"keeps every figure"}}, nil
	})
}
