package trust_test

import (
	"testing"

	"github.com/vouchkit/vouch/internal/uncleantest"
)

// TestHandler_uncleanPath: a POST of the trust call written with a
// doubled slash, sent by a client that does not follow redirects (curl
// without -L), is answered 404 with a problem naming the route, and
// makes no call; http.ServeMux answered it with a redirect and an empty
// body.
func TestHandler_uncleanPath(t *testing.T) {
	fc := &fakeCaller{}
	srv := newServer(t, fc)
	for _, path := range []string{"//api/v4/trust", "/api/v4//trust"} {
		uncleantest.NotFound(t, srv.URL, path, "/api/v4/trust",
			`{"mode":"validation","policy":"safe","task":{"type":"tool_output","claimed_result":"17 * 3 = 51"}}`,
			"Authorization", "Bearer "+testKey)
	}
	if n := fc.calls.Load(); n != 0 {
		t.Errorf("%d calls made, want none", n)
	}
}
