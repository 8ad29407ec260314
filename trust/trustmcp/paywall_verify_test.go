package trustmcp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vouchkit/vouch/trust/trustmcp"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// silentFacilitator never answers a verification: its Verify returns
// only when its context ends.
type silentFacilitator struct{ scriptedFacilitator }

func (*silentFacilitator) Verify(ctx context.Context, _ *x402.PaymentPayload, _ x402.PaymentRequirements) (*x402.VerifyResponse, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// A verification the facilitator never answers ends within
// SettleTimeout as a tool error: it does not hold the call, and its
// reservation of the proof, for as long as the client waits.
func TestPaywall_verifyIsBounded(t *testing.T) {
	f := newFixture(t)
	offer, err := evm.USDC("base-sepolia", "0x000000000000000000000000000000000000dEaD", "$0.005")
	if err != nil {
		t.Fatal(err)
	}
	payment := x402.PaymentPayload{X402Version: 2, Accepted: offer, Payload: json.RawMessage(`{"signature":"0x00"}`)}
	payment.Accepted.Network = "eip155:84532"
	pay, err := trustmcp.Paywall(trustmcp.PaywallConfig{Facilitator: &silentFacilitator{},
		Prices:        map[string]x402.Price{"validate_claim": {Accepts: []x402.PaymentRequirements{offer}}},
		SettleTimeout: 50 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	s, err := trustmcp.NewServer(f.cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.AddReceivingMiddleware(pay)
	// The client waits far longer than SettleTimeout; without the bound
	// the call ends only when the client gives up.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	res, err := connect(t, s).CallTool(ctx, &mcp.CallToolParams{Name: "validate_claim",
		Arguments: map[string]any{"claimed_result": "17 * 3 = 51"}, Meta: mcp.Meta{trustmcp.MetaPayment: payment}})
	if err != nil {
		t.Fatalf("call: %v, want a tool error", err)
	}
	if !res.IsError || !strings.Contains(text(res), "payment processing unavailable") {
		t.Errorf("%v %q, want a tool error saying payment processing is unavailable", res.IsError, text(res))
	}
}
