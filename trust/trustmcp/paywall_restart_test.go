package trustmcp_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vouchkit/vouch/trust/trustmcp"
)

// httpSession connects the official client to s over loopback Streamable
// HTTP, until the test ends.
func httpSession(t *testing.T, s *mcp.Server) *mcp.ClientSession {
	t.Helper()
	srv := statelessHTTP(t, s)
	hc := &http.Client{Transport: &http.Transport{}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: hc, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		hc.CloseIdleConnections()
	})
	return cs
}

// A server whose answers outlive it (pgstore's AnswerStore) and whose
// replay store does not (a MemoryReplay) answers the retry of a payment
// spent before its restart from the kept answer: the payer gets the
// result it paid for, with the first settlement, charged once, and the
// tool does not run again. The payment stays spent for any other call,
// and a payment whose result a gate refused gets the same refusal.
func TestPaywall_answerKeptAcrossRestartOfTheReplayStore(t *testing.T) {
	fac := &countingFacilitator{}
	answers := &trustmcp.MemoryAnswers{} // the durable store
	cfg := trustmcp.PaywallConfig{Facilitator: fac, Answers: answers, Gates: map[string]trustmcp.ToolGate{
		"square": func(_ context.Context, call *mcp.CallToolRequest, _ *mcp.CallToolResult) *mcp.CallToolResult {
			if strings.Contains(string(call.Params.Arguments), "4") {
				return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: "refused"}}}
			}
			return nil
		},
	}}
	before := newReplayRig(t, cfg)
	ctx := context.Background()
	p, refused := before.payment(t), before.payment(t)
	cs := httpSession(t, before.srv)
	first, err := paidCall(ctx, t, cs, "square", 7, p)
	if err != nil {
		t.Fatal(err)
	}
	want := answer(t, first)
	if res, err := paidCall(ctx, t, cs, "square", 4, refused); err != nil || !res.IsError || text(res) != "refused" {
		t.Fatalf("square(4): %v %v, want the gate's refusal", res, err)
	}

	after := newReplayRig(t, cfg) // restarted: its replay store is new
	cs = httpSession(t, after.srv)
	again, err := paidCall(ctx, t, cs, "square", 7, p)
	if err != nil {
		t.Fatal(err)
	}
	if again.IsError {
		t.Fatalf("the retry on the restarted server: %s, want the kept result", text(again))
	}
	if diff := cmp.Diff(want, answer(t, again)); diff != "" {
		t.Errorf("the retry on the restarted server (-first +retry):\n%s", diff)
	}
	other, err := paidCall(ctx, t, cs, "square", 8, p)
	if err != nil {
		t.Fatal(err)
	}
	if pr := paidTerms(t, other); !strings.Contains(pr.Error, "already used") {
		t.Errorf("square(8) with the payment of square(7) after the restart: %q, want already used", pr.Error)
	}
	if res, err := paidCall(ctx, t, cs, "square", 4, refused); err != nil || !res.IsError || text(res) != "refused" {
		t.Errorf("square(4) again after the restart: %v %v, want the kept refusal", res, err)
	}
	got := []int32{before.runs.Load() + after.runs.Load(), fac.settled.Load()}
	if diff := cmp.Diff([]int32{2, 1}, got); diff != "" {
		t.Errorf("runs and settlements (-want +got):\n%s", diff)
	}
}
