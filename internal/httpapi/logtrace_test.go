package httpapi_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"maps"
	"net/http"
	"slices"
	"testing"

	"github.com/google/go-cmp/cmp"

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

// TestServer_logLeavesOutEmpty: a request's log line leaves out an
// attribute without a value, as spans and metrics do, rather than write
// caller="" or trace_id="": a request refused before it is admitted has
// no caller, one without a traceparent and without telemetry no trace id.
func TestServer_logLeavesOutEmpty(t *testing.T) {
	const tp = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	always := []string{"duration", "level", "method", "msg", "path", "replayed", "request_id", "status", "time"}
	tests := []struct {
		name    string
		headers []string
		want    []string // the line's keys, sorted
	}{
		{"neither", nil, always},
		{"caller", []string{"Authorization", "Bearer " + testKey}, append([]string{"caller"}, always...)},
		{"trace", []string{"traceparent", tp}, append(always, "trace_id")},
		{"both", []string{"Authorization", "Bearer " + testKey, "traceparent", tp}, append([]string{"caller"}, append(always, "trace_id")...)},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var log bytes.Buffer
			srv := newServer(t, httpapi.Config{
				Name:      "test",
				Endpoints: []httpapi.Endpoint{{Method: "POST", Path: "/api/v1/echo", Access: httpapi.Key, Prepare: echo}},
				Logger:    slog.New(slog.NewJSONHandler(&log, nil)),
			})
			send(t, "POST", srv.URL+"/api/v1/echo", `{}`, tc.headers...)
			srv.Close() // waits for the handler: the log line is written
			var line map[string]any
			if err := json.Unmarshal(log.Bytes(), &line); err != nil {
				t.Fatalf("log %q: want one JSON line (%v)", log.Bytes(), err)
			}
			if diff := cmp.Diff(tc.want, slices.Sorted(maps.Keys(line))); diff != "" {
				t.Errorf("log line %s: keys (-want +got):\n%s", log.Bytes(), diff)
			}
		})
	}
}
