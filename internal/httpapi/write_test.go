package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/internal/httpapi"
)

// TestWithRequestID: a handler served beside a Server, behind
// WithRequestID, answers with an X-Request-Id that its problems repeat as
// request_id, and keeps the id of a Server it is served behind.
func TestWithRequestID(t *testing.T) {
	refuse := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		httpapi.WriteAuthError(w, r, httpapi.ErrNoCredentials)
	})
	plain := httptest.NewServer(httpapi.WithRequestID(refuse))
	t.Cleanup(plain.Close)
	inner := newServer(t, httpapi.Config{Endpoints: []httpapi.Endpoint{{Method: "GET", Path: "/door", Access: httpapi.Public, Handler: httpapi.WithRequestID(refuse)}}})

	seen := map[string]bool{}
	for _, url := range []string{plain.URL + "/door", plain.URL + "/door", inner.URL + "/door"} {
		got := send(t, "GET", url, "")
		p := got.problem(t)
		id := got.header.Get("X-Request-Id")
		if got.status != 401 || !strings.HasPrefix(id, "req_") || p.RequestID != id || p.Instance != "/door" {
			t.Errorf("%s: %d, X-Request-Id %q, problem %+v; want 401 with the id in both and the path", url, got.status, id, p)
		}
		if seen[id] {
			t.Errorf("%s: request id %q given twice", url, id)
		}
		seen[id] = true
	}
}
