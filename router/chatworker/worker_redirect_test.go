package chatworker_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vouchkit/vouch/router/chatworker"
)

// TestWorker_Work_redirect checks that the worker follows a redirect on
// the endpoint's own origin, and refuses one to another host: the
// request carries the key and the configured headers, which must not
// reach a host the worker was not given, and that host's reply must not
// become the endpoint's answer.
func TestWorker_Work_redirect(t *testing.T) {
	const answer = `{"choices":[{"message":{"content":"{\"verdict\":\"VALID\",\"confidence\":0.9}"},"finish_reason":"stop"}]}`
	var reached atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		io.WriteString(w, answer)
	}))
	defer other.Close()
	// Another host name for the same loopback address.
	elsewhere := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)

	tests := []struct {
		name          string
		location      func(self string) string
		wantErr       bool
		wantRequests  int32 // reaching the endpoint's origin
		wantElsewhere int32
	}{
		{"same origin is followed", func(self string) string { return self + "/moved/chat/completions" }, false, 2, 0},
		{"another host is refused, not retried", func(string) string { return elsewhere + "/v1/chat/completions" }, true, 1, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reached.Store(0)
			var self string
			var requests atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				requests.Add(1)
				io.Copy(io.Discard, r.Body)
				if r.URL.Path == "/moved/chat/completions" {
					io.WriteString(w, answer)
					return
				}
				http.Redirect(w, r, tt.location(self), http.StatusTemporaryRedirect)
			}))
			defer srv.Close()
			self = srv.URL
			w, err := chatworker.New(chatworker.Config{
				BaseURL: srv.URL + "/v1", Model: "m", APIKey: "sk-secret-key",
				Headers:    http.Header{"Api-Key": {"gateway-secret"}},
				MaxRetries: 2, RetryWaitMin: time.Millisecond, RetryWaitMax: time.Millisecond,
			})
			if err != nil {
				t.Fatal(err)
			}
			res, err := w.Work(t.Context(), validateJob())
			if tt.wantErr {
				if err == nil {
					t.Errorf("Work = verdict %s, want an error", res.Verdict)
				} else if !strings.Contains(err.Error(), "redirect to another origin refused") {
					t.Errorf("Work error %q does not name the redirect", err)
				}
			} else if err != nil {
				t.Errorf("Work: %v", err)
			}
			if got := requests.Load(); got != tt.wantRequests {
				t.Errorf("the endpoint got %d requests, want %d", got, tt.wantRequests)
			}
			if got := reached.Load(); got != tt.wantElsewhere {
				t.Errorf("the other host got %d requests, want %d", got, tt.wantElsewhere)
			}
		})
	}
}
