package trustmcp_test

import (
	"strings"
	"testing"

	"github.com/vouchkit/vouch/trust/trustmcp"
)

// TestServer_nullArguments: arguments written as null are no arguments,
// as a paid call's arguments are counted: the tool error names the
// argument that is required, not the null.
func TestServer_nullArguments(t *testing.T) {
	f := newFixture(t)
	s, err := trustmcp.NewServer(f.cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := statelessHTTP(t, s)
	for tool, want := range map[string]string{"validate_claim": "claimed_result", "factcheck": "claim", "get_receipt": "receipt_id"} {
		text, raw, ok := toolErrorText(t, srv.URL, tool, `null`)
		if !ok {
			t.Errorf("%s with null arguments: %s, want a tool error", tool, raw)
			continue
		}
		if !strings.Contains(text, want) || strings.Contains(text, "reflect") {
			t.Errorf("%s with null arguments: %q, want it to name %s", tool, text, want)
		}
	}
}

// toolErrorText calls tool with the JSON arguments args over srvURL and
// returns the text of the tool error it answered, the raw answer, and
// whether it was a tool error with a text.
func toolErrorText(t *testing.T, srvURL, tool, args string) (text, raw string, ok bool) {
	t.Helper()
	var out struct {
		Result *struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	raw = string(rawToolCall(t, srvURL, tool, args, &out))
	if out.Result == nil || !out.Result.IsError || len(out.Result.Content) == 0 {
		return "", raw, false
	}
	return out.Result.Content[0].Text, raw, true
}
