package trustmcp_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

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
	srv := statelessHTTP(t, s)

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
			raw := rawToolCall(t, srv.URL, tc.tool, tc.args, &msg)
			if msg.Error != nil || len(msg.Result.Content) == 0 {
				t.Fatalf("answered %s, want a tool result", raw)
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
