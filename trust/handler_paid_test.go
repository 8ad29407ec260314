package trust_test

import (
	"net/http"
	"strings"
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
	payer, err := evm.NewPayer("0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318")
	if err != nil {
		t.Fatal(err)
	}
	pr, err := payer.Pay(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	proof, err := x402.EncodeHeader(x402.PaymentPayload{X402Version: 2, Accepted: o, Payload: pr.Payload})
	if err != nil {
		t.Fatal(err)
	}
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
	want := "payer:" + strings.ToLower(payer.Address().String())
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.callers) != 1 || c.callers[0] != want {
		t.Errorf("callers = %q, want [%q]", c.callers, want)
	}
}
