package router_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/vouchkit/vouch/router"
)

// TestHTTPWorker_redirect checks that an HTTPWorker follows a redirect on
// the worker's own origin, and refuses one to another host: the request
// carries the headers of WithWorkerHeader, which must not reach a host
// the worker was not given, and that host's result must not vote.
func TestHTTPWorker_redirect(t *testing.T) {
	const result = `{"verdict":"VALID","confidence":0.9}`
	var reached atomic.Int32
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		io.WriteString(w, result)
	}))
	defer other.Close()
	// Another host name for the same loopback address.
	elsewhere := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)

	tests := []struct {
		name     string
		location func(self string) string
		wantErr  bool
	}{
		{"same origin is followed", func(self string) string { return self + "/moved" }, false},
		{"another host is refused", func(string) string { return elsewhere + "/work" }, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			reached.Store(0)
			var self string
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				io.Copy(io.Discard, r.Body)
				if r.URL.Path == "/moved" {
					io.WriteString(w, result)
					return
				}
				http.Redirect(w, r, tt.location(self), http.StatusTemporaryRedirect)
			}))
			defer srv.Close()
			self = srv.URL
			w := router.HTTPWorker(srv.URL+"/work", router.WithWorkerHeader("X-Api-Key", "worker-secret"))
			res, err := w.Work(t.Context(), sampleJob(t))
			switch {
			case tt.wantErr && err == nil:
				t.Errorf("Work = verdict %s, want an error", res.Verdict)
			case tt.wantErr && !strings.Contains(err.Error(), "redirect to another origin refused"):
				t.Errorf("Work error %q does not name the redirect", err)
			case !tt.wantErr && err != nil:
				t.Errorf("Work: %v", err)
			}
			if got := reached.Load(); got != 0 {
				t.Errorf("the other host got %d requests, want none", got)
			}
		})
	}
}
