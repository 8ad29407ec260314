package trusta2a_test

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"testing"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/a2aproject/a2a-go/a2aclient"

	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/trusta2a"
)

// erring is a trust service whose every call fails with err.
type erring struct{ err error }

func (e erring) Call(context.Context, *trust.Request) (*trust.Response, error) { return nil, e.err }

// panicking is a trust service whose every call panics with err.
type panicking struct{ err error }

func (p panicking) Call(context.Context, *trust.Request) (*trust.Response, error) { panic(p.err) }

// logBuffer is a log destination safe for concurrent writes.
type logBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// An internal error (here a remote trust service's, naming its address)
// never reaches the A2A client, in message/send's task, in tasks/get or
// anywhere in the JSON-RPC answers: the task fails with a fixed message
// and a code, as the HTTP routes answer a bare 500 and the MCP tools
// "unavailable", and the server's log keeps the error. A deadline is a
// timeout, as on the HTTP routes. A call that panics fails as an
// internal error.
func TestMessageSend_internalErrorNotReturned(t *testing.T) {
	const where = "trust.internal:8443"
	internal := &url.Error{Op: "Post", URL: "https://" + where + "/v1/trust?api_key=s3cr3t", Err: fmt.Errorf("dial tcp 10.0.0.7:8443: connection refused")}
	for _, tt := range []struct {
		name       string
		caller     trust.Caller
		want, code string
	}{
		{"internal", erring{internal}, "validate_claim failed: internal error (500 internal)", "internal"},
		{"deadline", erring{fmt.Errorf("calling %s: %w", where, context.DeadlineExceeded)}, "validate_claim failed: the call did not finish in time (504 timeout)", "timeout"},
		{"panic", panicking{internal}, "validate_claim failed: internal error (500 internal)", "internal"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var log logBuffer
			h, err := trusta2a.NewHandler(trusta2a.Config{Caller: tt.caller, Logger: slog.New(slog.NewTextHandler(&log, nil))})
			if err != nil {
				t.Fatal(err)
			}
			var bodies logBuffer // every answer the client receives
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				rec := httptest.NewRecorder()
				h.ServeHTTP(rec, r)
				bodies.Write(rec.Body.Bytes())
				for k, v := range rec.Header() {
					w.Header()[k] = v
				}
				w.WriteHeader(rec.Code)
				io.Copy(w, rec.Body)
			}))
			defer srv.Close()
			c, err := a2aclient.NewFromEndpoints(context.Background(), []a2a.AgentInterface{{URL: srv.URL, Transport: a2a.TransportProtocolJSONRPC}},
				a2aclient.WithJSONRPCTransport(srv.Client()))
			if err != nil {
				t.Fatal(err)
			}
			defer c.Destroy()
			task, err := send(t, c, a2a.TextPart{Text: `Validate the claimed result "17 * 3 = 51"`})
			if err != nil {
				t.Fatal(err)
			}
			got, err := c.GetTask(context.Background(), &a2a.TaskQueryParams{ID: task.ID})
			if err != nil {
				t.Fatal(err)
			}
			for _, tk := range []*a2a.Task{task, got} {
				if tk.Status.State != a2a.TaskStateFailed || tk.Status.Message == nil || tk.Status.Message.Parts[0].(a2a.TextPart).Text != tt.want ||
					tk.Status.Message.Metadata["code"] != tt.code {
					t.Errorf("task %s %+v, want failed saying %q with the code %q", tk.Status.State, tk.Status.Message, tt.want, tt.code)
				}
			}
			if b := bodies.String(); strings.Contains(b, where) || strings.Contains(b, "10.0.0.7") || strings.Contains(b, "s3cr3t") {
				t.Errorf("the client received the internal error:\n%s", b)
			}
			if tt.code == "internal" && !strings.Contains(log.String(), "10.0.0.7") {
				t.Errorf("the log does not keep the internal error:\n%s", log.String())
			}
		})
	}
}

// A 1.0 SendMessage whose call panics answers its task, failed as an
// internal error, rather than drop the connection.
func TestSendMessage_v1CallPanics(t *testing.T) {
	h, err := trusta2a.NewHandler(trusta2a.Config{Caller: panicking{fmt.Errorf("dial tcp 10.0.0.7:8443: connection refused")}})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(
		`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"Validate the claimed result \"17 * 3 = 51\""}]}}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("A2A-Version", "1.0")
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatalf("SendMessage: %v, want an answer", err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"TASK_STATE_FAILED"`) || !strings.Contains(string(b), "internal error (500 internal)") || strings.Contains(string(b), "10.0.0.7") {
		t.Errorf("answer %s, want the task failed as an internal error, without the panic's value", b)
	}
}
