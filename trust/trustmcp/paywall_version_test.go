package trustmcp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vouchkit/vouch/trust/trustmcp"
)

// A payment in _meta is checked as the HTTP doors check its header: an
// x402Version other than 1 or 2, a missing network, a member of the
// wrong type, or a payload (or a proof) that is no object is refused with the terms, naming the member, before anything
// is reserved, run or settled; nor is such a proof taken for a retry of
// the paid call whose payload it carries.
func TestPaywall_refusesAMalformedProof(t *testing.T) {
	r := newReplayRig(t, trustmcp.PaywallConfig{})
	cs := connect(t, r.srv)
	ctx := context.Background()
	p := r.payment(t)
	if _, err := paidCall(ctx, t, cs, "square", 7, p); err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(p)
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		change func(m map[string]any)
		want   string
	}{
		"version 20":         {func(m map[string]any) { m["x402Version"] = 20 }, "x402Version must be 1 or 2, got 20"},
		"no network":         {func(m map[string]any) { delete(m["accepted"].(map[string]any), "network") }, "accepted.network is required"},
		"payload not object": {func(m map[string]any) { m["payload"] = "0x00" }, "payload must be an object"},
		"version a string":   {func(m map[string]any) { m["x402Version"] = "2" }, "x402Version expected a number, got string"},
		"network a number":   {func(m map[string]any) { m["accepted"].(map[string]any)["network"] = 8453 }, "accepted.network expected a string, got number"},
	} {
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		tc.change(m)
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "square", Arguments: map[string]any{"n": 7}, Meta: mcp.Meta{trustmcp.MetaPayment: m}})
		if err != nil {
			t.Fatal(err)
		}
		if pr := paidTerms(t, res); !strings.Contains(pr.Error, tc.want) {
			t.Errorf("%s: refused with %q, want it to say %q", name, pr.Error, tc.want)
		}
	}
	for _, v := range []any{"0x00", 5, []any{p}} {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "square", Arguments: map[string]any{"n": 7}, Meta: mcp.Meta{trustmcp.MetaPayment: v}})
		if err != nil {
			t.Fatal(err)
		}
		if pr := paidTerms(t, res); !strings.Contains(pr.Error, "must be an object") || strings.Contains(pr.Error, "Go ") {
			t.Errorf("payment %v: refused with %q, want it to say it must be an object", v, pr.Error)
		}
	}
	if n, s := r.runs.Load(), r.fac.settled.Load(); n != 1 || s != 1 {
		t.Errorf("%d runs and %d settlements, want the first call's 1 and 1", n, s)
	}
}
