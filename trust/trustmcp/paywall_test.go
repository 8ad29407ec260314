package trustmcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/trustmcp"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

const payerKey = "4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"

// countingFacilitator counts settlements.
type countingFacilitator struct {
	evm.Facilitator
	settled atomic.Int32
}

func (f *countingFacilitator) Settle(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.SettleResponse, error) {
	f.settled.Add(1)
	return f.Facilitator.Settle(ctx, p, r)
}

// paidTerms reads the terms of a tool result that asks for payment: in
// content[0].text, as the x402/error wrapper with code 402, and not in
// structuredContent, which clients check against the tool's output schema.
func paidTerms(t *testing.T, res *mcp.CallToolResult) trustmcp.PaymentRequired {
	t.Helper()
	if !res.IsError {
		t.Fatalf("the tool ran without payment: %s", text(res))
	}
	if res.StructuredContent != nil {
		t.Errorf("structured content %v: want none, the terms are not the tool's answer", res.StructuredContent)
	}
	var wrapped struct {
		Err struct {
			Code int                      `json:"code"`
			Data trustmcp.PaymentRequired `json:"data"`
		} `json:"x402/error"`
	}
	if err := json.Unmarshal([]byte(text(res)), &wrapped); err != nil || wrapped.Err.Code != 402 || wrapped.Err.Data.X402Version != 2 || len(wrapped.Err.Data.Accepts) == 0 {
		t.Fatalf("content[0].text %q (%v): want the x402/error wrapper with code 402 and version 2 terms", text(res), err)
	}
	pr, err := trustmcp.PaymentTerms(res)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wrapped.Err.Data, *pr); diff != "" {
		t.Errorf("PaymentTerms (-text +got):\n%s", diff)
	}
	return *pr
}

func TestPaywall(t *testing.T) {
	f := newFixture(t)
	offer, err := evm.USDC("base-sepolia", "0x000000000000000000000000000000000000dEaD", "$0.005")
	if err != nil {
		t.Fatal(err)
	}
	fac := &countingFacilitator{}
	pay, err := trustmcp.Paywall(trustmcp.PaywallConfig{
		Facilitator: fac,
		Prices:      map[string]x402.Price{"validate_claim": {Accepts: []x402.PaymentRequirements{offer}, Description: "a trust call"}},
	})
	if err != nil {
		t.Fatal(err)
	}
	s, err := trustmcp.NewServer(f.cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.AddReceivingMiddleware(pay)
	cs := connect(t, s)
	ctx := context.Background()
	call := func(args map[string]any, payment any) *mcp.CallToolResult {
		p := &mcp.CallToolParams{Name: "validate_claim", Arguments: args}
		if payment != nil {
			p.Meta = mcp.Meta{trustmcp.MetaPayment: payment}
		}
		res, err := cs.CallTool(ctx, p)
		if err != nil {
			t.Fatalf("protocol error %v", err)
		}
		return res
	}
	claim := map[string]any{"claimed_result": "17 * 3 = 51"}

	// Without payment: the terms, and nothing runs.
	pr := paidTerms(t, call(claim, nil))
	if pr.Resource == nil || pr.Resource.URL != "mcp://tool/validate_claim" || pr.Accepts[0].Network != "eip155:84532" || pr.Accepts[0].Amount != offer.Amount {
		t.Errorf("terms %+v: want mcp://tool/validate_claim on eip155:84532 for %s", pr, offer.Amount)
	}

	// Paid: the tool runs and the payment settles once.
	payer, err := evm.NewPayer("0x" + payerKey)
	if err != nil {
		t.Fatal(err)
	}
	proof, err := payer.Pay(ctx, pr.Accepts[0])
	if err != nil {
		t.Fatal(err)
	}
	payment := x402.PaymentPayload{X402Version: 2, Resource: pr.Resource, Accepted: pr.Accepts[0], Payload: proof.Payload}
	res := call(claim, payment)
	var resp trust.Response
	decode(t, res, &resp)
	if resp.Status != trust.StatusValid {
		t.Errorf("paid call: %s, want VALID", resp.Status)
	}
	var sr x402.SettleResponse
	b, _ := json.Marshal(res.Meta[trustmcp.MetaPaymentResponse])
	if err := json.Unmarshal(b, &sr); err != nil || !sr.Success || !strings.EqualFold(sr.Payer, payer.Address().String()) {
		t.Errorf("_meta[x402/payment-response] = %s (%v), want a success paid by %s", b, err, payer.Address())
	}
	if n := fac.settled.Load(); n != 1 {
		t.Errorf("settled %d times, want 1", n)
	}

	// The same payment for another call: already used, not settled again.
	if pr := paidTerms(t, call(map[string]any{"claimed_result": "17 * 3 = 52"}, payment)); !strings.Contains(pr.Error, "already used") {
		t.Errorf("repeat: %q, want already used", pr.Error)
	}
	// A payment for a call that fails is not settled, and may be sent again.
	proof2, err := payer.Pay(ctx, pr.Accepts[0])
	if err != nil {
		t.Fatal(err)
	}
	payment2 := x402.PaymentPayload{X402Version: 2, Resource: pr.Resource, Accepted: pr.Accepts[0], Payload: proof2.Payload}
	if res := call(map[string]any{"claimed_result": "x", "policy": "cheap"}, payment2); !res.IsError || strings.Contains(text(res), "x402") {
		t.Errorf("paid bad call: %q, want the tool's own error", text(res))
	}
	if res := call(claim, payment2); res.IsError {
		t.Errorf("payment of a failed call sent again: %s, want it accepted", text(res))
	}
	if n := fac.settled.Load(); n != 2 {
		t.Errorf("settled %d times, want 2", n)
	}
	// A payment that does not decode or pays another offer: the terms.
	if pr := paidTerms(t, call(claim, "garbage")); !strings.Contains(pr.Error, trustmcp.MetaPayment) {
		t.Errorf("undecodable payment: %q", pr.Error)
	}
	cheap := payment2
	cheap.Accepted.Amount = "1"
	if pr := paidTerms(t, call(claim, cheap)); !strings.Contains(pr.Error, "none of the accepted offers") {
		t.Errorf("underpaid: %q", pr.Error)
	}
	// Free tools stay free.
	if res := callTool(t, cs, "factcheck", map[string]any{"claim": "17 * 3 = 51"}); res.IsError {
		t.Errorf("factcheck (free): %s", text(res))
	}
}

func TestPaywall_config(t *testing.T) {
	offer, _ := evm.USDC("base-sepolia", "0x000000000000000000000000000000000000dEaD", "$0.005")
	short := offer
	short.MaxTimeoutSeconds = 10
	badUpto, _ := evm.UptoUSDC("base-sepolia", "0x000000000000000000000000000000000000dEaD", "$0.005", evm.OfflineFacilitatorAddress)
	badUpto.Amount = "5e3"
	for _, cfg := range []trustmcp.PaywallConfig{
		{Prices: map[string]x402.Price{"validate_claim": {Accepts: []x402.PaymentRequirements{offer}}}},
		{Facilitator: &evm.Facilitator{}},
		{Facilitator: &evm.Facilitator{}, Prices: map[string]x402.Price{"validate_claim": {}}},
		{Facilitator: &evm.Facilitator{}, Prices: map[string]x402.Price{"validate_claim": {Accepts: []x402.PaymentRequirements{short}}}},
		{Facilitator: &evm.Facilitator{}, Prices: map[string]x402.Price{"validate_claim": {Accepts: []x402.PaymentRequirements{badUpto}}}},
		{Facilitator: &evm.Facilitator{}, Prices: map[string]x402.Price{"validate_claim": {Accepts: []x402.PaymentRequirements{offer}, TimeBudget: -time.Second}}},
		{Facilitator: &evm.Facilitator{}, Prices: map[string]x402.Price{"validate_claim": {Accepts: []x402.PaymentRequirements{offer}}}, SettleTimeout: -time.Second},
	} {
		if _, err := trustmcp.Paywall(cfg); err == nil {
			t.Errorf("Paywall(%+v) succeeded", cfg)
		}
	}
}

// A tool that settles before it runs cannot have its result checked
// first: the Paywall refuses a gate on such a tool, and an "upto" offer
// on it (which settles what the tool used), as x402.Middleware refuses
// both on a route, naming the tool. A gate that would never run (nil, or
// on a tool without a price) is refused too.
func TestPaywall_configSettleBefore(t *testing.T) {
	exact, _ := evm.USDC("base-sepolia", "0x000000000000000000000000000000000000dEaD", "$0.005")
	upto, _ := evm.UptoUSDC("base-sepolia", "0x000000000000000000000000000000000000dEaD", "$0.005", evm.OfflineFacilitatorAddress)
	pass := func(context.Context, *mcp.CallToolRequest, *mcp.CallToolResult) *mcp.CallToolResult { return nil }
	price := map[string]x402.Price{"arbitrate": {Accepts: []x402.PaymentRequirements{exact}}}
	for name, cfg := range map[string]trustmcp.PaywallConfig{
		"unpriced": {Facilitator: &evm.Facilitator{}, Prices: price, Gates: map[string]trustmcp.ToolGate{"validate_claim": pass}},
		"nil":      {Facilitator: &evm.Facilitator{}, Prices: price, Gates: map[string]trustmcp.ToolGate{"arbitrate": nil}},
	} {
		_, err := trustmcp.Paywall(cfg)
		if err == nil || !strings.Contains(err.Error(), "PaywallConfig.Gates[") {
			t.Errorf("%s gate: Paywall = %v, want an error naming the gate", name, err)
		}
	}
	for name, cfg := range map[string]trustmcp.PaywallConfig{
		"gate": {Facilitator: &evm.Facilitator{},
			Prices: map[string]x402.Price{"arbitrate": {Accepts: []x402.PaymentRequirements{exact}, SettleBefore: true}},
			Gates:  map[string]trustmcp.ToolGate{"arbitrate": pass}},
		"upto": {Facilitator: &evm.Facilitator{},
			Prices: map[string]x402.Price{"arbitrate": {Accepts: []x402.PaymentRequirements{upto}, SettleBefore: true}}},
	} {
		_, err := trustmcp.Paywall(cfg)
		if err == nil || !strings.Contains(err.Error(), `"arbitrate"`) || !strings.Contains(err.Error(), "SettleBefore") {
			t.Errorf("%s: Paywall = %v, want an error naming the tool and SettleBefore", name, err)
		}
	}
}

// scriptedFacilitator answers Verify and Settle as told.
type scriptedFacilitator struct {
	verify    *x402.VerifyResponse
	verifyErr error
	settle    *x402.SettleResponse
	settleErr error
}

func (f *scriptedFacilitator) Verify(context.Context, *x402.PaymentPayload, x402.PaymentRequirements) (*x402.VerifyResponse, error) {
	return f.verify, f.verifyErr
}

func (f *scriptedFacilitator) Settle(context.Context, *x402.PaymentPayload, x402.PaymentRequirements) (*x402.SettleResponse, error) {
	return f.settle, f.settleErr
}

func (f *scriptedFacilitator) Supported(context.Context) (*x402.SupportedResponse, error) {
	return &x402.SupportedResponse{}, nil
}

// errFacilitator is a facilitator's error, naming what a payer must not
// see.
var errFacilitator = errors.New("POST https://facilitator.internal/settle?api_key=s3cr3t: connection reset")

func TestPaywall_facilitatorAnswers(t *testing.T) {
	f := newFixture(t)
	offer, err := evm.USDC("base-sepolia", "0x000000000000000000000000000000000000dEaD", "$0.005")
	if err != nil {
		t.Fatal(err)
	}
	payment := x402.PaymentPayload{X402Version: 2, Accepted: offer, Payload: json.RawMessage(`{"signature":"0x00"}`)}
	payment.Accepted.Network = "eip155:84532"
	for _, c := range []struct {
		name string
		fac  *scriptedFacilitator
		want string // in the error text
	}{
		{"invalid", &scriptedFacilitator{verify: &x402.VerifyResponse{InvalidReason: "invalid_exact_evm_payload_signature"}}, "invalid_exact_evm_payload_signature"},
		{"facilitator down", &scriptedFacilitator{verifyErr: errFacilitator}, "payment processing unavailable"},
		{"no verification", &scriptedFacilitator{}, "payment processing unavailable"},
		{"no settlement", &scriptedFacilitator{verify: &x402.VerifyResponse{IsValid: true}}, "settlement failed: unexpected_settle_error"},
		{"settlement error", &scriptedFacilitator{verify: &x402.VerifyResponse{IsValid: true}, settleErr: errFacilitator},
			"settlement failed: unexpected_settle_error: the facilitator could not settle the payment"},
		{"settlement failed", &scriptedFacilitator{verify: &x402.VerifyResponse{IsValid: true},
			settle: &x402.SettleResponse{ErrorReason: "insufficient_funds", Network: "eip155:84532"}}, "settlement failed: insufficient_funds"},
	} {
		t.Run(c.name, func(t *testing.T) {
			var log logBuffer
			pay, err := trustmcp.Paywall(trustmcp.PaywallConfig{Facilitator: c.fac,
				Prices: map[string]x402.Price{"validate_claim": {Accepts: []x402.PaymentRequirements{offer}}},
				Logger: slog.New(slog.NewTextHandler(&log, nil))})
			if err != nil {
				t.Fatal(err)
			}
			s, err := trustmcp.NewServer(f.cfg)
			if err != nil {
				t.Fatal(err)
			}
			s.AddReceivingMiddleware(pay)
			res, err := connect(t, s).CallTool(context.Background(), &mcp.CallToolParams{Name: "validate_claim",
				Arguments: map[string]any{"claimed_result": "17 * 3 = 51"}, Meta: mcp.Meta{trustmcp.MetaPayment: payment}})
			if err != nil {
				t.Fatal(err)
			}
			if !res.IsError || !strings.Contains(text(res), c.want) {
				t.Errorf("%v %q, want a tool error with %q", res.IsError, text(res), c.want)
			}
			// The facilitator's own error is logged, never shown to the payer:
			// it may name the facilitator's address or key.
			if c.fac.verifyErr != nil || c.fac.settleErr != nil {
				if strings.Contains(text(res), "facilitator.internal") {
					t.Errorf("the payer sees the facilitator's error: %q", text(res))
				}
				if !strings.Contains(log.String(), "facilitator.internal") {
					t.Errorf("the log lacks the facilitator's error:\n%s", log.String())
				}
			}
			if c.fac.settle != nil {
				pr := paidTerms(t, res)
				if pr.Settlement == nil || pr.Settlement.Success || pr.Settlement.ErrorReason != "insufficient_funds" {
					t.Errorf("failed settlement in the terms: %+v, want it with its reason", pr.Settlement)
				}
			}
		})
	}
}

func TestPaywall_validityAndSettleBefore(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	offer, err := evm.USDC("base-sepolia", "0x000000000000000000000000000000000000dEaD", "$0.005")
	if err != nil {
		t.Fatal(err)
	}
	fac := &countingFacilitator{}
	pay, err := trustmcp.Paywall(trustmcp.PaywallConfig{Facilitator: fac, Prices: map[string]x402.Price{
		"validate_claim": {Accepts: []x402.PaymentRequirements{offer}},
		"arbitrate":      {Accepts: []x402.PaymentRequirements{offer}, SettleBefore: true},
	}})
	if err != nil {
		t.Fatal(err)
	}
	s, err := trustmcp.NewServer(f.cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.AddReceivingMiddleware(pay)
	cs := connect(t, s)
	payer, err := evm.NewPayer("0x" + payerKey)
	if err != nil {
		t.Fatal(err)
	}
	paid := func(tool string, args map[string]any, signedAt time.Time) *mcp.CallToolResult {
		t.Helper()
		payer.Now = func() time.Time { return signedAt }
		o := offer
		o.Network = "eip155:84532"
		proof, err := payer.Pay(ctx, o)
		if err != nil {
			t.Fatal(err)
		}
		p := x402.PaymentPayload{X402Version: 2, Accepted: o, Payload: proof.Payload}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args, Meta: mcp.Meta{trustmcp.MetaPayment: p}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}

	// Signed 50 s ago, the authorization has 10 s left: less than the time
	// budget and the settlement.
	res := paid("validate_claim", map[string]any{"claimed_result": "17 * 3 = 51"}, time.Now().Add(-50*time.Second))
	if pr := paidTerms(t, res); !strings.HasPrefix(pr.Error, "authorization_validity_too_short") {
		t.Errorf("short-lived authorization: %q, want authorization_validity_too_short", pr.Error)
	}
	if n := fac.settled.Load(); n != 0 {
		t.Errorf("settled %d times, want 0", n)
	}

	// Settled before: a tool error is paid for, and carries the settlement.
	res = paid("arbitrate", map[string]any{"claimed_result": "17 * 3 = 51"}, time.Now())
	if !res.IsError || !strings.Contains(text(res), "dispute_context") || res.Meta[trustmcp.MetaPaymentResponse] == nil {
		t.Errorf("settle-before call with a bad argument: %v %q, _meta %v; want the tool error with the settlement", res.IsError, text(res), res.Meta)
	}
	if n := fac.settled.Load(); n != 1 {
		t.Errorf("settled %d times, want 1", n)
	}
}
