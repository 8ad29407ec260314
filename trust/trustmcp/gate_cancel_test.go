package trustmcp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vouchkit/vouch/trust/trustmcp"
	"github.com/vouchkit/vouch/trust/trustpay"
)

// A tool call cancelled before its result was validated is refused as
// cancelled (not as out of time, and without a panic on the verdict it
// does not have), and is not settled.
func TestValidateResult_cancelledCall(t *testing.T) {
	gate := squareGate(t)
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	call := &mcp.CallToolRequest{Params: &mcp.CallToolParamsRaw{Name: "square", Arguments: json.RawMessage(`{"n":7}`)}}
	r := gate(ctx, call, &mcp.CallToolResult{StructuredContent: map[string]int{"square": 49}})
	if r == nil || !r.IsError {
		t.Fatalf("gate after a cancel = %+v, want a refusal", r)
	}
	var v trustmcp.Verdict
	b, _ := json.Marshal(r.StructuredContent)
	if err := json.Unmarshal(b, &v); err != nil || v.Status != trustpay.StatusCancelled || v.Settled {
		t.Errorf("verdict %s, want status %s, not settled", b, trustpay.StatusCancelled)
	}
	if txt := r.Content[0].(*mcp.TextContent).Text; !strings.Contains(txt, "cancelled") {
		t.Errorf("text %q does not say the call was cancelled", txt)
	}
}
