package trustmcp_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vouchkit/vouch/trust/trustmcp"
	"github.com/vouchkit/vouch/x402"
)

// A payment whose result was kept while it settled (a tool that settles
// after it runs, whose settlement failed) is spent whatever the replay
// store remembers, as the Paywall's documentation says: once the server
// restarted with a new replay store, the payment sent to a tool priced
// with SettleBefore is refused as already used, as it is before the
// restart, and is neither verified, settled nor run there; the retry of
// the first call still settles it and gets its result.
func TestPaywall_settlingResultSpentForASettleBeforeTool(t *testing.T) {
	exact, _ := settlingOffers(t)
	fac := newFaultySettle(1, false)
	answers := &trustmcp.MemoryAnswers{} // the durable store
	var runs [2]int
	rig := func(i int) *mcp.ClientSession {
		var now func() time.Time
		if i == 1 { // restarted once the first settlement was due
			now = func() time.Time { return time.Now().Add(x402.DefaultSettleTimeout + time.Second) }
		}
		pay, err := trustmcp.Paywall(trustmcp.PaywallConfig{Facilitator: fac, Answers: answers, Now: now,
			Prices: map[string]x402.Price{
				"square":  {Accepts: []x402.PaymentRequirements{exact}},
				"prepaid": {Accepts: []x402.PaymentRequirements{exact}, SettleBefore: true},
			}})
		if err != nil {
			t.Fatal(err)
		}
		s := mcp.NewServer(&mcp.Implementation{Name: "settling", Version: "v0"}, nil)
		square := func(_ context.Context, req *mcp.CallToolRequest, in squareIn) (*mcp.CallToolResult, squareOut, error) {
			runs[i]++
			return nil, squareOut{Square: in.N * in.N, Run: runs[0] + runs[1]}, nil
		}
		mcp.AddTool(s, &mcp.Tool{Name: "square"}, square)
		mcp.AddTool(s, &mcp.Tool{Name: "prepaid"}, square)
		s.AddReceivingMiddleware(pay)
		return httpSession(t, s)
	}
	call := func(cs *mcp.ClientSession, tool string, p x402.PaymentPayload) *mcp.CallToolResult {
		t.Helper()
		res, err := paidCall(context.Background(), t, cs, tool, 3, p)
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	before := rig(0)
	p, _ := signedPayment(t, exact)
	wantSettlementFailed(t, call(before, "square", p), "unexpected_settle_error")
	if pr := paidTerms(t, call(before, "prepaid", p)); !strings.Contains(pr.Error, "already used") {
		t.Fatalf("another tool before the restart: %q, want already used", pr.Error)
	}
	after := rig(1) // restarted: its replay store is new
	asked := fac.asked.Load()
	res := call(after, "prepaid", p)
	if !res.IsError {
		t.Errorf("another tool after the restart ran and was paid for: %s", text(res))
	} else if pr := paidTerms(t, res); !strings.Contains(pr.Error, "already used") {
		t.Errorf("another tool after the restart: %q, want already used", pr.Error)
	}
	got := answer(t, call(after, "square", p))
	counts := []any{got.Structured, fac.asked.Load() - asked, len(fac.Settlements()), runs}
	if diff := cmp.Diff([]any{`{"run":1,"square":9}`, int32(1), 1, [2]int{1, 0}}, counts); diff != "" {
		t.Errorf("the retry of the first call: result, settlements asked after the restart, settlements, runs (-want +got):\n%s", diff)
	}
}
