package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/trustmcp"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// With -mcp-paid, the paid MCP tools offer auth-capture beside exact,
// held in the offline escrow as the paid trust route's: a delivered
// result is captured, with the trust verdict in the report, a tool that
// fails is voided, and the buyer's balance, read from the demo endpoint,
// is back after the void.
func TestRun_mcpPaidInEscrow(t *testing.T) {
	t.Parallel()
	base, _, stop := startServer(t, "-mcp-paid")
	defer stop()
	cs, err := mcpSession(t, base+mcpPath, defaultAPIKey)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	payer, err := evm.NewPayer(strings.Repeat("49", 32))
	if err != nil {
		t.Fatal(err)
	}
	balance := func() int64 { t.Helper(); return demoBalance(t, base, payer.Address().String()) }
	for _, tc := range []struct {
		method  string
		args    map[string]any
		verdict string
		state   x402.EscrowState
		spent   int64
	}{
		{evm.TransferEIP3009, map[string]any{"claimed_result": "17 * 3 = 51"}, string(trust.StatusValid), x402.EscrowCaptured, 5000},
		{evm.TransferPermit2, map[string]any{"claimed_result": "17 * 3 = 51", "policy": "no such policy"}, "failed", x402.EscrowVoided, 5000},
		// The money follows the verdict, as on the HTTP trust route: an
		// INVALID answer is a definitive verdict, delivered and captured.
		{evm.TransferEIP3009, map[string]any{"claimed_result": "17 * 3 = 52"}, string(trust.StatusInvalid), x402.EscrowCaptured, 10000},
	} {
		terms, err := trustmcp.PaymentTerms(callTool(t, cs, "validate_claim", tc.args))
		if err != nil {
			t.Fatal(err)
		}
		var offer x402.PaymentRequirements
		for _, o := range terms.Accepts {
			if o.Scheme == x402.SchemeAuthCapture && o.Extra["assetTransferMethod"] == tc.method {
				offer = o
			}
		}
		if offer.Scheme == "" {
			t.Fatalf("the terms %+v offer no auth-capture by %s", terms.Accepts, tc.method)
		}
		proof, err := payer.Pay(ctx, offer)
		if err != nil {
			t.Fatal(err)
		}
		payment := x402.PaymentPayload{X402Version: x402.Version2, Resource: terms.Resource, Accepted: offer, Payload: proof.Payload}
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "validate_claim", Arguments: tc.args, Meta: mcp.Meta{trustmcp.MetaPayment: payment}})
		if err != nil {
			t.Fatal(err)
		}
		var sr x402.SettleResponse
		b, _ := json.Marshal(res.Meta[trustmcp.MetaPaymentResponse])
		if err := json.Unmarshal(b, &sr); err != nil {
			t.Fatalf("%s: _meta %s: %v", tc.method, b, err)
		}
		e, ok := x402.EscrowFromSettlement(&sr)
		if !ok || !sr.Success || e.State != tc.state || e.Verdict != tc.verdict {
			t.Errorf("%s: %q, report %+v (%v), want %s with verdict %s", tc.method, resultText(res), e, ok, tc.state, tc.verdict)
		}
		if got := balance(); got != escrowOpenBalance-tc.spent {
			t.Errorf("%s: the buyer holds %d, want %d", tc.method, got, escrowOpenBalance-tc.spent)
		}
	}
}
