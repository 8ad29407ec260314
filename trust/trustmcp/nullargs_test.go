package trustmcp_test

import (
	"strings"
	"testing"
)

// TestServer_nullArguments: arguments written as null are no arguments,
// as a paid call's arguments are counted: the tool error names the
// argument that is required, not the null.
func TestServer_nullArguments(t *testing.T) {
	s := newServer(t)
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

// TestServer_nullArgumentIsAbsent: an argument written as null is read
// as left out, as the HTTP doors read a null member, whatever its type:
// the call answers as it does without it, and a required one is named.
func TestServer_nullArgumentIsAbsent(t *testing.T) {
	s := newServer(t)
	srv := statelessHTTP(t, s)
	for _, args := range []string{
		`{"claimed_result":"Paris","policy":null}`,
		`{"claimed_result":"Paris","policy":"fast","receipt":null,"input":null}`,
	} {
		if text, raw, isErr := toolErrorText(t, srv.URL, "validate_claim", args); isErr {
			t.Errorf("validate_claim %s: tool error %q (%s), want it answered", args, text, raw)
		}
	}
	for tool, args := range map[string]string{
		"delegate_task": `{"input":"What is 2 + 2?","answer":"number","tolerance":null}`,
		"factcheck":     `{"claim":"Paris is in France.","replicas":null,"mode":null}`,
	} {
		if text, raw, isErr := toolErrorText(t, srv.URL, tool, args); isErr {
			t.Errorf("%s %s: tool error %q (%s), want it answered", tool, args, text, raw)
		}
	}
	text, raw, isErr := toolErrorText(t, srv.URL, "get_receipt", `{"receipt_id":null}`)
	if !isErr || !strings.Contains(text, "receipt_id") || strings.Contains(text, "reflect") {
		t.Errorf("get_receipt with a null receipt_id: %q (%s), want a tool error naming receipt_id", text, raw)
	}
}
