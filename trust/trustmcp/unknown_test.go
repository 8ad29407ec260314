package trustmcp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vouchkit/vouch/trust/trustmcp"
)

// TestTools_unknownArgument calls each kind of tool with a misspelt
// argument: the answer is a tool error that names it (the SDK validates
// the arguments against the input schema, which lists the only members
// allowed), not an answer under the default the misspelling would have
// left in place.
func TestTools_unknownArgument(t *testing.T) {
	s := newServer(t)
	cs := connect(t, s)
	for _, c := range []struct {
		tool string
		args map[string]any
		want string // in the error text
	}{
		{trustmcp.ToolValidateClaim, map[string]any{"input": "2+2", "claimed_result": "4", "reciept": "inline"}, "reciept does not equal any of"},
		{trustmcp.ToolDelegateTask, map[string]any{"input": "2+2", "answer": "number", "tolerance": map[string]any{"abs": 1}}, "/properties/tolerance"},
		{trustmcp.ToolFactcheck, map[string]any{"claim": "2+2 is 4", "polcy": "oracle"}, "polcy does not equal any of"},
		{trustmcp.ToolVerifyReceipt, map[string]any{"receipt": map[string]any{}, "ouput": "4"}, "ouput does not equal any of"},
	} {
		res := callTool(t, cs, c.tool, c.args)
		if !res.IsError || !strings.Contains(text(res), c.want) {
			t.Errorf("%s %v: error %t %q, want a tool error containing %q", c.tool, c.args, res.IsError, text(res), c.want)
		}
	}
}

// TestTools_argumentsReadAsSent calls the tools with arguments that
// decoding would read otherwise than the client sent them: an argument
// named twice (the last copy would win) and bytes that are not UTF-8
// (read as U+FFFD, so that a receipt would hash other text). Each is a
// tool error naming the argument.
func TestTools_argumentsReadAsSent(t *testing.T) {
	s := newServer(t)
	cs := connect(t, s)
	for _, c := range []struct {
		tool string
		args string
		want string
	}{
		{trustmcp.ToolFactcheck, `{"claim":"17 * 3 = 50","claim":"17 * 3 = 51"}`, "argument claim: member \"claim\" appears more than once"},
		{trustmcp.ToolValidateClaim, "{\"claimed_result\":\"17 * 3 = 51 \xff\",\"receipt\":\"inline\"}", "argument claimed_result: is not valid UTF-8"},
		{trustmcp.ToolValidateClaim, `{"claimed_result":{"n":1,"n":2}}`, "argument claimed_result.n:"},
	} {
		res := callTool(t, cs, c.tool, json.RawMessage(c.args))
		if !res.IsError || !strings.Contains(text(res), c.want) {
			t.Errorf("%s %s: error %t %q, want a tool error containing %q", c.tool, c.args, res.IsError, text(res), c.want)
		}
	}
}

// TestDelegateTask_emptyAgreement calls delegate_task over Streamable HTTP
// with agreement "": a tool error that names the argument and the values
// it takes, as answer "" and policy "" are, not a delegation under the
// default, exact agreement. The input schema lists the values.
func TestDelegateTask_emptyAgreement(t *testing.T) {
	s := newServer(t)
	srv := statelessHTTP(t, s)
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: srv.URL, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	res := callTool(t, cs, trustmcp.ToolDelegateTask, map[string]any{"input": "17 * 3", "agreement": ""})
	msg := text(res)
	if !res.IsError {
		t.Fatalf("agreement \"\": answered %q, want a tool error", msg)
	}
	for _, w := range []string{"agreement", "exact", "judged"} {
		if !strings.Contains(msg, w) {
			t.Errorf("error %q does not name %q", msg, w)
		}
	}
}
