package trustmcp_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vouchkit/vouch/trust/trustmcp"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// A tool priced to settle before it runs is paid for whatever it does:
// when it fails with a protocol error, the payer still learns that it
// paid, from a tool error that carries the settlement, and the retry
// with the same payment gets the same answer without paying or running
// again.
func TestPaywall_settleBeforeProtocolError(t *testing.T) {
	offer, err := evm.USDC("eip155:84532", "0x000000000000000000000000000000000000dEaD", "$0.005")
	if err != nil {
		t.Fatal(err)
	}
	fac := &countingFacilitator{}
	pay, err := trustmcp.Paywall(trustmcp.PaywallConfig{Facilitator: fac, Prices: map[string]x402.Price{
		"arbitrate": {Accepts: []x402.PaymentRequirements{offer}, SettleBefore: true},
	}})
	if err != nil {
		t.Fatal(err)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "before", Version: "v0"}, nil)
	runs := 0
	s.AddTool(&mcp.Tool{Name: "arbitrate", InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		runs++
		return nil, &jsonrpc.Error{Code: jsonrpc.CodeInvalidParams, Message: "no such dispute"}
	})
	s.AddReceivingMiddleware(pay)
	cs := connect(t, s)
	p, _ := signedPayment(t, offer)
	call := func() (*mcp.CallToolResult, x402.SettleResponse) {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "arbitrate", Arguments: map[string]any{}, Meta: mcp.Meta{trustmcp.MetaPayment: p}})
		if err != nil {
			t.Fatalf("a paid call answered the protocol error %v, without its settlement", err)
		}
		return res, settlementOf(t, res)
	}
	first, sr1 := call()
	again, sr2 := call()
	if !first.IsError || !again.IsError {
		t.Errorf("isError %v then %v, want tool errors", first.IsError, again.IsError)
	}
	if diff := cmp.Diff([]any{text(first), sr1.Transaction}, []any{text(again), sr2.Transaction}); diff != "" {
		t.Errorf("the retry (-first +retry):\n%s", diff)
	}
	if n := fac.settled.Load(); n != 1 || runs != 1 {
		t.Errorf("settled %d times, ran %d times; want once each", n, runs)
	}
}
