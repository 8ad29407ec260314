package router_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"testing"
	"time"

	"golang.org/x/time/rate"

	"github.com/vouchkit/vouch/internal/unixtest"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

// TestHandler_unixProxyKeepsCallersApart: behind a reverse proxy that
// reaches the Handler on a Unix domain socket, with
// WithTrustedUnixProxy, the trial route counts each client the proxy
// names in X-Forwarded-For in a bucket of its own (one call an hour):
// two clients each make their call. Without it the socket's peer has no
// address to list, and the second was refused 429, in the first's bucket.
func TestHandler_unixProxyKeepsCallersApart(t *testing.T) {
	h, err := router.NewHandler(newEngine(t, routertest.Sessions(1, 1, routertest.Verdict(router.VerdictValid))),
		router.WithTrustedUnixProxy(), router.WithTrialLimit(router.TrialLimit{Rate: rate.Every(time.Hour), Burst: 1}))
	if err != nil {
		t.Fatal(err)
	}
	hc := unixtest.NewServer(t, h)
	body, err := json.Marshal(validateV2(1))
	if err != nil {
		t.Fatal(err)
	}
	for _, client := range []string{"198.51.100.1", "198.51.100.2"} {
		req, err := http.NewRequest(http.MethodPost, "http://router/api/v2/trial/validate", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Forwarded-For", client)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("the client at %s: %d, want 200 in its own bucket", client, resp.StatusCode)
		}
	}
}
