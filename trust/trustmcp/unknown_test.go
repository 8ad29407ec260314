package trustmcp_test

import (
	"strings"
	"testing"

	"github.com/vouchkit/vouch/trust/trustmcp"
)

// TestTools_unknownArgument calls each kind of tool with a misspelt
// argument: the answer is a tool error that names it (the SDK validates
// the arguments against the input schema, which lists the only members
// allowed), not an answer under the default the misspelling would have
// left in place.
func TestTools_unknownArgument(t *testing.T) {
	f := newFixture(t)
	s, err := trustmcp.NewServer(f.cfg)
	if err != nil {
		t.Fatal(err)
	}
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
