package trust_test

import (
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
)

// recordOnly compares a reputation.Lead's record (session, won, lost),
// not the level and margin it led at.
var recordOnly = cmpopts.IgnoreFields(reputation.Lead{}, "Level", "Margin")

// remoteRouter serves svc on a router.Handler over loopback HTTP, with the
// API key "k", until the test ends, and returns a router.Client of it.
func remoteRouter(t testing.TB, svc router.Service) *router.Client {
	t.Helper()
	h, err := router.NewHandler(svc, router.WithAuthenticator(router.KeyAuthenticator(map[string]string{"k": "tests"})))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	c, err := router.NewClient(srv.URL, router.WithAPIKey("k"))
	if err != nil {
		t.Fatal(err)
	}
	return c
}
