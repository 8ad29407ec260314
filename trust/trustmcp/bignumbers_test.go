package trustmcp_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/trustmcp"
)

// TestTools_numbersBeyondFloat64 calls the tools over Streamable HTTP with
// numbers that no float64 holds: a claimed result of 1e400, which
// POST /api/v4/trust judges as any JSON value and refuses by name only
// when a receipt must hash it, runs and comes back as sent; a typed
// argument out of range is a tool error naming it, as every other bad
// argument is, never a decoder's message about Go types.
func TestTools_numbersBeyondFloat64(t *testing.T) {
	worker := router.WorkerFunc(func(_ context.Context, job *router.Job) (*router.Result, error) {
		return &router.Result{Verdict: router.VerdictNeedsSpec, Confidence: 0.5, Output: json.RawMessage(`1`)}, nil
	})
	engine, err := router.NewEngine([]router.Session{{ID: 1, Pool: "a", Worker: worker}})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := trust.New(engine)
	if err != nil {
		t.Fatal(err)
	}
	s, err := trustmcp.NewServer(trustmcp.Config{Caller: svc, Router: engine})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s },
		&mcp.StreamableHTTPOptions{Stateless: true, JSONResponse: true}))
	defer srv.Close()

	type answer struct {
		IsError bool
		Text    string
		Result  string // structuredContent.result, as written
	}
	tests := []struct {
		name, tool, args string
		want             answer
	}{
		{"claimed result beyond float64", "validate_claim", `{"claimed_result":1e400,"policy":"fast"}`,
			answer{Result: "1e400"}},
		{"nested in the claimed result", "validate_claim", `{"claimed_result":{"x":-1e400},"policy":"fast"}`,
			answer{Result: `{"x":-1e400}`}},
		{"claimed result a receipt must hash", "validate_claim", `{"claimed_result":1e400,"policy":"fast","receipt":"inline"}`,
			answer{IsError: true, Text: "trustmcp: argument claimed_result: cannot be hashed for the receipt: failed to canonicalize JSON: number 1e400 is out of the range of an IEEE 754 double"}},
		{"tolerance beyond float64", "delegate_task", `{"objective":"o","policy":"fast","answer":"number","tolerance":{"absolute":1e400}}`,
			answer{IsError: true, Text: "trustmcp: argument tolerance.absolute: number 1e400 is out of range: must be a finite number"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"` + tc.tool + `","arguments":` + tc.args + `}}`
			req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(body))
			if err != nil {
				t.Fatal(err)
			}
			req.Header.Set("Content-Type", "application/json")
			req.Header.Set("Accept", "application/json, text/event-stream")
			resp, err := srv.Client().Do(req)
			if err != nil {
				t.Fatal(err)
			}
			raw, err := io.ReadAll(resp.Body)
			resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			var msg struct {
				Error  json.RawMessage `json:"error"`
				Result struct {
					IsError           bool `json:"isError"`
					Content           []struct{ Text string }
					StructuredContent struct {
						Result json.RawMessage `json:"result"`
					} `json:"structuredContent"`
				} `json:"result"`
			}
			if err := json.Unmarshal(raw, &msg); err != nil || resp.StatusCode != http.StatusOK || msg.Error != nil || len(msg.Result.Content) == 0 {
				t.Fatalf("answered %d %s, want a tool result", resp.StatusCode, raw)
			}
			got := answer{IsError: msg.Result.IsError, Result: string(msg.Result.StructuredContent.Result)}
			if got.IsError {
				got.Text = msg.Result.Content[0].Text
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("answer (-want +got):\n%s\nbody: %s", diff, raw)
			}
		})
	}
}
