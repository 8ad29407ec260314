package trustmcp_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestTools_integerWrittenWithFraction calls factcheck over Streamable
// HTTP with replicas written as JSON writers other than Go's and
// JavaScript's write a whole number (Python's json writes 5.0 for a
// float): JSON Schema counts 5.0 and 5e0 integers, so the input schema's
// "type": "integer" admits them, and the tool takes them as 5. A number
// with a fraction is still a tool error naming replicas.
func TestTools_integerWrittenWithFraction(t *testing.T) {
	s := newServer(t)
	srv := statelessHTTP(t, s)

	type got struct {
		IsError  bool
		Replicas int
		Text     string
	}
	call := func(replicas string) got {
		t.Helper()
		var out struct {
			Result *struct {
				IsError           bool `json:"isError"`
				StructuredContent *struct {
					Consensus struct {
						Replicas int `json:"replicas"`
					} `json:"consensus"`
				} `json:"structuredContent"`
				Content []struct {
					Text string `json:"text"`
				} `json:"content"`
			} `json:"result"`
		}
		if raw := rawToolCall(t, srv.URL, "factcheck", `{"claim":"17 * 3 = 51","replicas":`+replicas+`}`, &out); out.Result == nil {
			t.Fatalf("replicas %s: %s: want a tool result", replicas, raw)
		}
		g := got{IsError: out.Result.IsError}
		if sc := out.Result.StructuredContent; sc != nil {
			g.Replicas = sc.Consensus.Replicas
		}
		if len(out.Result.Content) > 0 && g.IsError {
			g.Text = out.Result.Content[0].Text
		}
		return g
	}
	for _, replicas := range []string{"5", "5.0", "5e0", "50e-1", "0.5E+1"} {
		if diff := cmp.Diff(got{Replicas: 5}, call(replicas)); diff != "" {
			t.Errorf("replicas %s (-want +got):\n%s", replicas, diff)
		}
	}
	for _, replicas := range []string{"5.5", "4.0"} {
		if g := call(replicas); !g.IsError || !strings.Contains(g.Text, "replicas") {
			t.Errorf("replicas %s: %+v, want a tool error naming replicas", replicas, g)
		}
	}
}
