package trustmcp_test

import (
	"strings"
	"testing"
)

// TestServer_emptyObjective: delegate_task given an input and an
// objective of no text is a tool error naming objective, over loopback
// HTTP, rather than a run with the objective dropped, as the trust call
// over HTTP refuses a delegation's task.spec of no text.
func TestServer_emptyObjective(t *testing.T) {
	s := newServer(t)
	srv := statelessHTTP(t, s)
	for _, args := range []string{`{"input":"x","objective":""}`, `{"input":"x","objective":"  "}`, `{"objective":"\t"}`} {
		text, raw, ok := toolErrorText(t, srv.URL, "delegate_task", args)
		if !ok {
			t.Errorf("delegate_task %s: %s, want a tool error", args, raw)
			continue
		}
		if !strings.Contains(text, "objective:") {
			t.Errorf("delegate_task %s: %q, want it to name objective", args, text)
		}
	}
}
