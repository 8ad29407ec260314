package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"testing"

	"github.com/vouchkit/vouch/internal/httpapi"
	"github.com/vouchkit/vouch/internal/telemetry/telemetrytest"
	"github.com/vouchkit/vouch/internal/traceparent"
)

// traces returns the trace_id of each JSON log line named msg.
func traces(t *testing.T, log []byte, msg string) []string {
	t.Helper()
	var ids []string
	for line := range bytes.Lines(log) {
		var l struct {
			Msg   string
			Trace string `json:"trace_id"`
		}
		if err := json.Unmarshal(line, &l); err != nil {
			t.Fatalf("log line %q: %v", line, err)
		}
		if l.Msg == msg {
			ids = append(ids, l.Trace)
		}
	}
	return ids
}

// TestServer_logNamesAnswerTrace: a request's log line names the trace id
// its answer carries, so that the holder of an answer finds its line,
// when the request sent no traceparent: the one the call recorded with
// AnswerTrace, or the recorded server span's that the call ran under.
func TestServer_logNamesAnswerTrace(t *testing.T) {
	const made = "0af7651916cd43dd8448eb211c80319c"
	own := func(_ *http.Request, _ []byte) (httpapi.Run, error) {
		return func(ctx context.Context) (any, error) {
			httpapi.AnswerTrace(ctx, made)
			return map[string]string{"trace": made}, nil
		}, nil
	}
	rec := telemetrytest.New(t)
	tests := []struct {
		name string
		cfg  httpapi.Config
	}{
		{"call's own", httpapi.Config{Endpoints: []httpapi.Endpoint{{Method: "POST", Path: "/api/v1/echo", Access: httpapi.Key, Prepare: own}}}},
		{"server span's", httpapi.Config{Endpoints: []httpapi.Endpoint{{Method: "POST", Path: "/api/v1/echo", Access: httpapi.Key, Prepare: echo}},
			TracerProvider: rec.TracerProvider, MeterProvider: rec.MeterProvider}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var log bytes.Buffer
			tc.cfg.Name = "test"
			tc.cfg.Logger = slog.New(slog.NewJSONHandler(&log, nil))
			srv := newServer(t, tc.cfg)
			r := send(t, "POST", srv.URL+"/api/v1/echo", `{}`, "Authorization", "Bearer "+testKey)
			srv.Close() // waits for the handler: the log line is written
			var body struct{ Trace string }
			if err := json.Unmarshal([]byte(r.body), &body); err != nil || !traceparent.Valid(body.Trace) {
				t.Fatalf("answer %d %s: want a trace id (%v)", r.status, r.body, err)
			}
			if got := traces(t, log.Bytes(), "test request"); len(got) != 1 || got[0] != body.Trace {
				t.Errorf("log line trace_id = %q, want the answer's %q", got, body.Trace)
			}
		})
	}
}
