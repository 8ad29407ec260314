package trustmcp_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vouchkit/vouch/trust/trustmcp"
)

// TestPaywall_resultTypeOnNewProtocol: on a session of MCP 2026-07-28,
// where a tool result must say it is complete (resultType), the results
// the paywall writes itself (the terms of an unpaid call, a payment
// already used) say so as the tool's own results do; clients of that
// version (the official Python SDK) refuse a result without it.
func TestPaywall_resultTypeOnNewProtocol(t *testing.T) {
	r := newReplayRig(t, trustmcp.PaywallConfig{})
	cs := connect(t, r.srv)
	ctx := context.Background()
	unpaid, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "square", Arguments: map[string]any{"n": 3}})
	if err != nil {
		t.Fatal(err)
	}
	p := r.payment(t)
	paid, err := paidCall(ctx, t, cs, "square", 3, p)
	if err != nil {
		t.Fatal(err)
	}
	used, err := paidCall(ctx, t, cs, "square", 4, p)
	if err != nil {
		t.Fatal(err)
	}
	for what, res := range map[string]*mcp.CallToolResult{"unpaid": unpaid, "paid": paid, "payment used for another call": used} {
		b, err := json.Marshal(res)
		if err != nil {
			t.Fatal(err)
		}
		var got struct{ ResultType string }
		if err := json.Unmarshal(b, &got); err != nil || got.ResultType != "complete" {
			t.Errorf("%s: resultType %q (%v), want \"complete\" (error %v, %s)", what, got.ResultType, err, res.IsError, text(res))
		}
	}
}
