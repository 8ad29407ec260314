package trust_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"fmt"
	"log"
	"net/http/httptest"
	"strings"
	"time"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// keepsFigures is a host's own judge: a claimed summary is VALID when it
// keeps every figure (a word with a digit) of the task's input. The trust
// service hands a validation's task input to workers as job.TaskInput.
func keepsFigures(_ context.Context, job *router.Job) (*router.Result, error) {
	input, _ := job.TaskInput.String()
	var summary string
	if err := json.Unmarshal(job.Claim.Output, &summary); err != nil {
		return &router.Result{Verdict: router.VerdictNeedsSpec, Reasons: []string{"the claim is not text"}}, nil
	}
	for _, word := range strings.Fields(input) {
		word = strings.Trim(word, ".,;:")
		if strings.ContainsAny(word, "0123456789") && !strings.Contains(summary, word) {
			return &router.Result{Verdict: router.VerdictInvalid, Confidence: 0.9, Reasons: []string{"drops " + word}}, nil
		}
	}
	return &router.Result{Verdict: router.VerdictValid, Confidence: 0.9, Reasons: []string{"keeps every figure"}}, nil
}

// The trust service runs in process on the host's own workers. The call
// validates a claimed summary and asks for an inline signed receipt, which
// anyone holding the service's public key can verify offline.
func Example() {
	engine, err := router.NewEngine([]router.Session{
		{ID: 1, Worker: router.WorkerFunc(keepsFigures)},
		{ID: 2, Worker: router.WorkerFunc(keepsFigures)},
		{ID: 3, Worker: router.WorkerFunc(keepsFigures)},
	})
	if err != nil {
		log.Fatal(err)
	}
	key := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, 32)) // keep the private key secret
	svc, err := trust.New(engine, trust.WithSigningKey(key))
	if err != nil {
		log.Fatal(err)
	}

	resp, err := svc.Call(context.Background(), &trust.Request{
		Mode:    trust.ModeValidation,
		Policy:  trust.PolicySafe, // three replicas
		Task:    trust.Task{Type: "summary", Input: router.NewStringInput("Refunds within 30 days, at most 2 a year."), ClaimedResult: trust.JSON("Refunds within 30 days.")},
		Receipt: receipt.Inline(), // signed, with every optional member
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.Status)

	// The counterparty verifies the receipt against the issuer's public key.
	res, err := receipt.Verify(resp.Receipt, receipt.Ed25519Key(key.Public().(ed25519.PublicKey)))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("receipt:", res.Receipt.Decision.Status, res.Receipt.Decision.Reasons[1])
	fmt.Println("signed by", res.Issuer)
	// Output:
	// INVALID
	// receipt: INVALID drops 2
	// signed by ed25519:6kpsY-KcUgq-9VB7Ey7F-ZVHdq6-vnuSQh7qaRRG0iw
}

// A receipt is checked offline: receipt.Verify checks its schema, its
// signature, the key's validity window and its expiry; a Verifier also
// checks the hashes of the original input and output the verifier holds.
// A receipt changed after signing fails.
func Example_verifyReceipt() {
	key := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, 32))
	public := receipt.Ed25519Key(key.Public().(ed25519.PublicKey))
	svc, err := trust.New(routertestEngine(), trust.WithSigningKey(key))
	if err != nil {
		log.Fatal(err)
	}
	input := router.NewStringInput("What is the capital of France?")
	resp, err := svc.Call(context.Background(), &trust.Request{
		Mode: trust.ModeValidation, Policy: trust.PolicyFast, Receipt: receipt.Inline(),
		Task: trust.Task{Input: input, ClaimedResult: trust.JSON("Paris")},
	})
	if err != nil {
		log.Fatal(err)
	}

	if _, err := receipt.Verify(resp.Receipt, public); err == nil {
		fmt.Println("signature and expiry: passed")
	}

	v, err := receipt.NewVerifier([]receipt.PublicKey{public})
	if err != nil {
		log.Fatal(err)
	}
	res, err := v.Verify(resp.Receipt, receipt.Originals{Input: input.Raw(), Output: trust.JSON("Lyon")}, time.Now())
	for _, c := range res.Checks {
		if c.Name == receipt.CheckInputHash || c.Name == receipt.CheckOutputHash {
			fmt.Println(c.Name, c.Status)
		}
	}
	fmt.Println(errors.Is(err, receipt.ErrHashMismatch))

	forged := bytes.Replace(resp.Receipt, []byte(`"VALID"`), []byte(`"INVALID"`), 1)
	_, err = receipt.Verify(forged, public)
	fmt.Println(errors.Is(err, receipt.ErrBadSignature))
	// Output:
	// signature and expiry: passed
	// input_hash passed
	// output_hash failed
	// true
	// true
}

// A remote trust service answers through a Client exactly as the
// in-process Service does: both are Callers. Here the server runs on an
// engine of routertest workers, one of which lies.
func ExampleClient() {
	honest := routertest.Verdict(router.VerdictValid)
	engine, err := router.NewEngine(routertest.Sessions(1, 3, honest, routertest.Lie(honest), honest))
	if err != nil {
		log.Fatal(err)
	}
	svc, err := trust.New(engine)
	if err != nil {
		log.Fatal(err)
	}
	h, err := trust.NewHandler(svc, trust.WithAuthenticator(router.KeyAuthenticator(map[string]string{"demo-key": "demo"})))
	if err != nil {
		log.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()

	c, err := trust.NewClient(srv.URL, trust.WithAPIKey("demo-key"))
	if err != nil {
		log.Fatal(err)
	}
	resp, err := c.Call(context.Background(), &trust.Request{
		Mode:   trust.ModeValidation,
		Policy: trust.PolicySafe,
		Task:   trust.Task{Type: "summary", ClaimedResult: trust.JSON("Paris is the capital of France.")},
	})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.Status, "over", resp.Evidence.Redundancy, "replicas")
	// Output:
	// VALID over 3 replicas
}

// JSON turns a plain value into the JSON a task member holds; a
// json.RawMessage that is not JSON is refused with a field error.
func ExampleJSON() {
	svc, err := trust.New(routertestEngine())
	if err != nil {
		log.Fatal(err)
	}
	req := &trust.Request{Mode: trust.ModeValidation, Policy: trust.PolicyFast,
		Task: trust.Task{ClaimedResult: json.RawMessage("Paris")}} // not JSON
	_, err = svc.Call(context.Background(), req)
	fmt.Println(err)

	req.Task.ClaimedResult = trust.JSON("Paris")
	resp, err := svc.Call(context.Background(), req)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.Status, string(resp.Result))
	// Output:
	// 400 invalid_request: task.claimed_result: must be one JSON value; encode a plain Go value with trust.JSON
	// VALID "Paris"
}

// A receipt request beyond what the environment grants is narrowed, never
// refused; receipt_clamped says which terms were narrowed and why.
func ExampleResponse_receiptClamped() {
	svc, err := trust.New(routertestEngine(), trust.WithReceipts(&receipt.Issuer{Store: &receipt.MemStore{}}))
	if err != nil {
		log.Fatal(err)
	}
	resp, err := svc.Call(context.Background(), &trust.Request{
		Mode: trust.ModeValidation, Policy: trust.PolicyFast,
		Task:    trust.Task{ClaimedResult: trust.JSON("Paris")},
		Receipt: receipt.Request{Mode: receipt.DeliveryDetached, TTL: "1000d", Visibility: receipt.VisibilityPublic},
	})
	if err != nil {
		log.Fatal(err)
	}
	for _, c := range resp.ReceiptClamped {
		fmt.Printf("%s: %s → %s (%s)\n", c.Field, c.Requested, c.Effective, c.Reason)
	}
	// Output:
	// receipt.ttl: 1000d → 90d (the production environment keeps receipts at most 90d)
	// receipt.visibility: public → shared (public visibility is a future mode, not yet granted; the production environment grants at most shared visibility)
}

// routertestEngine is an engine of three always-VALID sessions.
func routertestEngine() *router.Engine {
	v := routertest.Verdict(router.VerdictValid)
	e, err := router.NewEngine(routertest.Sessions(1, 3, v, v, v))
	if err != nil {
		log.Fatal(err)
	}
	return e
}
