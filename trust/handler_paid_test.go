package trust_test

import (
	"context"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// TestHandler_x402CallerIsThePayer: a paid trust call is made for the
// payer the x402 middleware verified, "payer:<address>" in lower case.
func TestHandler_x402CallerIsThePayer(t *testing.T) {
	o, err := evm.USDC("base-sepolia", "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", "$0.001")
	if err != nil {
		t.Fatal(err)
	}
	mw, err := x402.Middleware(x402.MiddlewareConfig{Facilitator: &evm.Facilitator{}, Routes: map[string]x402.Price{"POST " + trust.X402CallPath: {Accepts: []x402.PaymentRequirements{o}}}})
	if err != nil {
		t.Fatal(err)
	}
	c := &fakeCaller{}
	srv := newServer(t, c, trust.WithX402(mw))
	proof := paymentProof(t, o)
	req, _ := http.NewRequest("POST", srv.URL+trust.X402CallPath, strings.NewReader(`{"mode":"validation","policy":"fast","task":{"claimed_result":"x"}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(x402.HeaderPaymentSignature, proof)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("paid call: %s", resp.Status)
	}
	payer, err := evm.NewPayer(devPayerKey)
	if err != nil {
		t.Fatal(err)
	}
	want := "payer:" + strings.ToLower(payer.Address().String())
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.callers) != 1 || c.callers[0] != want {
		t.Errorf("callers = %q, want [%q]", c.callers, want)
	}
}

// failingSettler is the offline facilitator whose settlements fail while
// failing is set, as when the payer moved its balance after verification.
type failingSettler struct {
	evm.Facilitator
	failing atomic.Bool
}

func (f *failingSettler) Settle(ctx context.Context, p *x402.PaymentPayload, o x402.PaymentRequirements) (*x402.SettleResponse, error) {
	if f.failing.Load() {
		return &x402.SettleResponse{ErrorReason: "insufficient_funds", Network: o.Network}, nil
	}
	return f.Facilitator.Settle(ctx, p, o)
}

// TestHandler_x402AnswerOfFailedSettlementIsNotKept: the answer of a
// paid trust call whose settlement failed is not kept for its
// Idempotency-Key: the retry with a new proof runs the call again and is
// settled, never answered with the unpaid answer; a retry after that is
// the kept answer.
func TestHandler_x402AnswerOfFailedSettlementIsNotKept(t *testing.T) {
	o, err := evm.USDC("base-sepolia", "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", "$0.001")
	if err != nil {
		t.Fatal(err)
	}
	fac := &failingSettler{}
	mw, err := x402.Middleware(x402.MiddlewareConfig{Facilitator: fac, Routes: map[string]x402.Price{"POST " + trust.X402CallPath: {Accepts: []x402.PaymentRequirements{o}}}})
	if err != nil {
		t.Fatal(err)
	}
	c := &fakeCaller{}
	srv := newServer(t, c, trust.WithX402(mw))
	call := func() (status int, replayed string) {
		t.Helper()
		proof := paymentProof(t, o)
		req, _ := http.NewRequest("POST", srv.URL+trust.X402CallPath, strings.NewReader(`{"mode":"validation","policy":"fast","task":{"claimed_result":"x"}}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", "k1")
		req.Header.Set(x402.HeaderPaymentSignature, proof)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode, resp.Header.Get("Idempotent-Replayed")
	}

	fac.failing.Store(true)
	if status, _ := call(); status != http.StatusPaymentRequired {
		t.Fatalf("call whose settlement fails: %d, want 402", status)
	}
	fac.failing.Store(false)
	if status, replayed := call(); status != http.StatusOK || replayed != "" {
		t.Errorf("retry with a new proof: %d, replayed %q; want 200 run anew", status, replayed)
	}
	if n := c.calls.Load(); n != 2 {
		t.Errorf("%d trust calls ran, want 2: the unpaid answer was kept", n)
	}
	if status, replayed := call(); status != http.StatusOK || replayed != "true" {
		t.Errorf("retry after a settled call: %d, replayed %q; want the kept answer", status, replayed)
	}
}

// devPayerKey is the private key of the payer of these tests.
const devPayerKey = "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"

// paymentProof returns the PAYMENT-SIGNATURE header of a fresh version 2
// payment of offer by devPayerKey's payer.
func paymentProof(t *testing.T, offer x402.PaymentRequirements) string {
	t.Helper()
	payer, err := evm.NewPayer(devPayerKey)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := payer.Pay(t.Context(), offer)
	if err != nil {
		t.Fatal(err)
	}
	proof, err := x402.EncodeHeader(x402.PaymentPayload{X402Version: 2, Accepted: offer, Payload: pr.Payload})
	if err != nil {
		t.Fatal(err)
	}
	return proof
}
