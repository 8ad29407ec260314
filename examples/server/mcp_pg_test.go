package main

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/trustmcp"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// Two servers with -mcp-paid on one database: a paid MCP call settled by
// the first, whose result is lost, is delivered again by the second to
// the retry with the same payment, from the database's replay and answer
// stores, without running or settling again.
func TestRun_mcpPaidAcrossServers(t *testing.T) {
	dbURL := databaseURL(t)
	schema := freshSchema(t, dbURL)
	args := []string{"-mcp-paid", "-database-url", dbURL, "-database-schema", schema}
	a, logA, _ := startServerBanner(t, args...)
	b, logB, _ := startServerBanner(t, args...)
	csA, err := mcpSession(t, a.base+mcpPath, defaultAPIKey)
	if err != nil {
		t.Fatal(err)
	}
	csB, err := mcpSession(t, b.base+mcpPath, defaultAPIKey)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	claim := map[string]any{"claimed_result": "17 * 3 = 51"}
	res := callTool(t, csA, "validate_claim", claim)
	terms, err := trustmcp.PaymentTerms(res)
	if err != nil || len(terms.Accepts) != 3 || terms.Accepts[0].Scheme != x402.SchemeExact {
		t.Fatalf("unpaid call: %v %q (%v), want the payment terms, exact first", res.IsError, resultText(res), err)
	}
	payer, err := evm.NewPayer(strings.Repeat("47", 32))
	if err != nil {
		t.Fatal(err)
	}
	proof, err := payer.Pay(ctx, terms.Accepts[0])
	if err != nil {
		t.Fatal(err)
	}
	payment := x402.PaymentPayload{X402Version: x402.Version2, Resource: terms.Resource, Accepted: terms.Accepts[0], Payload: proof.Payload}
	type paidAnswer struct {
		Response   trust.Response
		Settlement x402.SettleResponse
	}
	paid := func(cs *mcp.ClientSession) paidAnswer {
		t.Helper()
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "validate_claim", Arguments: claim, Meta: mcp.Meta{trustmcp.MetaPayment: payment}})
		if err != nil {
			t.Fatal(err)
		}
		var pa paidAnswer
		structured(t, res, &pa.Response)
		bs, _ := json.Marshal(res.Meta[trustmcp.MetaPaymentResponse])
		if err := json.Unmarshal(bs, &pa.Settlement); err != nil || !pa.Settlement.Success {
			t.Fatalf("_meta %s (%v), want the settlement", bs, err)
		}
		return pa
	}

	first := paid(csA) // then lost: the retry reaches the other server
	if first.Response.Status != trust.StatusValid || first.Response.TraceID == "" {
		t.Fatalf("first paid call: %+v, want VALID with a trace id", first.Response)
	}
	if diff := cmp.Diff(first, paid(csB)); diff != "" {
		t.Errorf("the retry on the other server differs from the first answer (a second run has another trace id and receipt) (-first +retry):\n%s", diff)
	}
	if n := strings.Count(logA.String()+logB.String(), `msg="trustmcp: settled"`); n != 1 {
		t.Errorf("%d settlements logged, want 1", n)
	}
	if n := strings.Count(logB.String(), `msg="trustmcp: answer delivered again"`); n != 1 {
		t.Errorf("the other server logged %d answers delivered again, want 1", n)
	}
}
