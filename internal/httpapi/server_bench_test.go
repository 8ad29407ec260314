package httpapi_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/vouchkit/vouch/internal/httpapi"
)

// BenchmarkServer_ServeHTTP serves a public GET with no logger and no
// telemetry: the cost a Server adds to a request's handler.
func BenchmarkServer_ServeHTTP(b *testing.B) {
	s, err := httpapi.NewServer(httpapi.Config{Name: "bench", Endpoints: []httpapi.Endpoint{{Method: "GET", Path: "/ping", Access: httpapi.Public,
		Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })}}})
	if err != nil {
		b.Fatal(err)
	}
	r := httptest.NewRequest(http.MethodGet, "/ping", nil)
	b.ReportAllocs()
	for b.Loop() {
		w := httptest.NewRecorder()
		s.ServeHTTP(w, r)
		if w.Code != http.StatusNoContent {
			b.Fatalf("status = %d, want 204", w.Code)
		}
	}
}
