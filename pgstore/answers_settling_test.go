package pgstore_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vouchkit/vouch/trust/trustmcp"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// failFirstSettle is the offline facilitator whose first settlement
// fails before it settles anything, as one lost on the way.
type failFirstSettle struct {
	*evm.Facilitator
	failed atomic.Bool
}

func (f *failFirstSettle) Settle(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.SettleResponse, error) {
	if f.failed.CompareAndSwap(false, true) {
		return nil, errors.New("the facilitator did not answer")
	}
	return f.Facilitator.Settle(ctx, p, r)
}

// The result an MCP paid call kept before its settlement failed is kept
// in the database: the retry of the call with the same payment on
// another server sharing it, once the first settlement is due (the
// second server's clock is later by more than the SettleTimeout),
// settles the payment and gets the result, and a later retry on the
// first server gets the same; the tool runs once and the facilitator
// settles once. A third server, whose clock is the first's, tells the
// retry to come back: it cannot tell the first settlement answered from
// one still under way.
func TestAnswerStore_failedSettlementSettledOnAnotherServer(t *testing.T) {
	dbs := openDBs(t, 2)
	offer, err := evm.USDC("eip155:84532", "0x000000000000000000000000000000000000dEaD", "$0.005")
	if err != nil {
		t.Fatal(err)
	}
	fac := &failFirstSettle{Facilitator: &evm.Facilitator{}}
	later := func() time.Time { return time.Now().Add(x402.DefaultSettleTimeout + time.Second) }
	runs, sessions := squareServers(t, append(dbs, dbs[0]), fac, offer, nil, later, nil)
	p := signedPayment(t, offer)
	call := func(cs *mcp.ClientSession) *mcp.CallToolResult {
		t.Helper()
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{
			Name: "square", Arguments: map[string]any{"n": 7}, Meta: mcp.Meta{trustmcp.MetaPayment: p}})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}

	if res := call(sessions[0]); !res.IsError || !strings.Contains(mcpText(res), "settlement failed") {
		t.Fatalf("the first use = %s, want settlement failed", mcpText(res))
	}
	if res := call(sessions[2]); !res.IsError || !strings.Contains(mcpText(res), "first use is settling it") {
		t.Fatalf("the retry before the first settlement is due = %s, want told to come back", mcpText(res))
	}
	retry := paidAnswer(t, call(sessions[1]))
	if diff := cmp.Diff(retry, paidAnswer(t, call(sessions[0]))); diff != "" {
		t.Errorf("a later retry on the first server (-retry +later):\n%s", diff)
	}
	got := []any{retry.Structured, len(fac.Settlements()), runs.Load()}
	if diff := cmp.Diff([]any{`{"square":49}`, 1, int32(1)}, got); diff != "" {
		t.Errorf("the result, settlements and runs (-want +got):\n%s", diff)
	}
}
