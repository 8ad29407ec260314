package trustmcp_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vouchkit/vouch/trust/trustmcp"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// TestPaywall_gatePanicIsInternalError: a gate that panics (its trust
// caller broke, say) answers the paid call with a JSON-RPC internal
// error, as a tool that panics does, rather than end the server; the
// payment is not settled, the panic's value goes to the log and never to
// the client, and the server goes on serving.
func TestPaywall_gatePanicIsInternalError(t *testing.T) {
	offer, err := evm.USDC("base-sepolia", "0x000000000000000000000000000000000000dEaD", "$0.005")
	if err != nil {
		t.Fatal(err)
	}
	fac := &countingFacilitator{}
	var log logBuffer
	pay, err := trustmcp.Paywall(trustmcp.PaywallConfig{Facilitator: fac,
		Prices: map[string]x402.Price{"validate_claim": {Accepts: []x402.PaymentRequirements{offer}}},
		Gates: map[string]trustmcp.ToolGate{"validate_claim": func(context.Context, *mcp.CallToolRequest, *mcp.CallToolResult) *mcp.CallToolResult {
			panic("gate broke at 10.0.0.7")
		}},
		Logger: slog.New(slog.NewTextHandler(&log, nil))})
	if err != nil {
		t.Fatal(err)
	}
	s := newServer(t)
	s.AddReceivingMiddleware(pay)
	srv := statelessHTTP(t, s)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: srv.URL, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()
	payment, _ := signedPayment(t, offer)
	payment.Accepted.Network = "eip155:84532"
	_, err = cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "validate_claim",
		Arguments: map[string]any{"claimed_result": "17 * 3 = 51"}, Meta: mcp.Meta{trustmcp.MetaPayment: payment}})
	msg := "no error"
	if err != nil {
		msg = err.Error()
	}
	free := callTool(t, cs, "factcheck", map[string]any{"claim": "17 * 3 = 51"})
	got := []any{strings.Contains(msg, "internal error"), strings.Contains(msg, "10.0.0.7"), fac.settled.Load(),
		strings.Contains(log.String(), "gate broke at 10.0.0.7"), free.IsError}
	if diff := cmp.Diff([]any{true, false, int32(0), true, false}, got); diff != "" {
		t.Errorf("internal error, panic shown, settlements, panic logged, next call failed (-want +got):\n%s\nerror: %s", diff, msg)
	}
}
