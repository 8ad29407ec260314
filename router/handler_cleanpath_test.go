package router_test

import (
	"testing"

	"github.com/vouchkit/vouch/internal/uncleantest"
)

// TestHandler_uncleanPath: a POST to a route written with a doubled
// slash, sent by a client that does not follow redirects (curl without
// -L), is answered 404 with a problem naming the route, and runs no
// job; http.ServeMux answered it with a redirect and an empty body.
func TestHandler_uncleanPath(t *testing.T) {
	srv, rec := newKeyedHandler(t)
	for _, path := range []string{"//api/v3/validate", "/api/v3//validate"} {
		uncleantest.NotFound(t, srv.URL, path, "/api/v3/validate",
			`{"claim":{"type":"summary","output":"x"},"consensus":{"replicas":3}}`, "Authorization", "Bearer k")
	}
	if n := rec.Calls.Load(); n != 0 {
		t.Errorf("%d jobs ran, want none", n)
	}
}
