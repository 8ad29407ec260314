package trust_test

import (
	"bytes"
	"encoding/json"
	"log/slog"
	"net/http"
	"testing"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// TestHandler_logNamesAnswerTrace: the log line of a trust call sent
// without a traceparent names the trace_id of its answer, the one the
// service made, so that the holder of an answer finds its line.
func TestHandler_logNamesAnswerTrace(t *testing.T) {
	valid := routertest.Verdict(router.VerdictValid)
	svc, err := trust.New(newEngine(t, valid, valid, valid))
	if err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	srv := newServer(t, svc, trust.WithHandlerLogger(slog.New(slog.NewJSONHandler(&log, nil))))
	status, answer := postTrust(t, srv.URL,
		`{"mode":"validation","policy":"safe","task":{"type":"tool_output","claimed_result":"17 * 3 = 51"}}`)
	trace, _ := answer["trace_id"].(string)
	if status != http.StatusOK || trace == "" {
		t.Fatalf("answer %d %v: want 200 with a trace_id", status, answer)
	}
	srv.Close() // waits for the handler: the log line is written

	var lines []string
	for line := range bytes.Lines(log.Bytes()) {
		var l struct {
			Path  string
			Trace string `json:"trace_id"`
		}
		if err := json.Unmarshal(line, &l); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if l.Path == "/api/v4/trust" {
			lines = append(lines, l.Trace)
		}
	}
	if len(lines) != 1 || lines[0] != trace {
		t.Errorf("log line trace_id = %q, want the answer's trace_id %q", lines, trace)
	}
}
