package trustmcp_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vouchkit/vouch/trust/trustmcp"
)

// TestDelegateTask_judgedNumber calls delegate_task over Streamable HTTP
// with answer "number" and agreement "judged", which the schema cannot
// rule out together: a tool error naming the argument agreement, as
// trustmcp names every argument it refuses, not the trust envelope's
// delegation.agreement, which is no argument of the tool.
func TestDelegateTask_judgedNumber(t *testing.T) {
	srv := statelessHTTP(t, newServer(t))
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: srv.URL, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	res := callTool(t, cs, trustmcp.ToolDelegateTask, map[string]any{"input": "17 * 3", "answer": "number", "agreement": "judged"})
	msg := text(res)
	if !res.IsError {
		t.Fatalf("answered %q, want a tool error", msg)
	}
	want := `trustmcp: argument agreement: a numeric answer (task.answer "number") is settled by the median within task.tolerance, not by judges`
	if diff := cmp.Diff(want, msg); diff != "" {
		t.Errorf("error text (-want +got):\n%s", diff)
	}
}
