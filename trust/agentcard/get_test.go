package agentcard_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/vouchkit/vouch/trust/agentcard"
)

// getCard GETs the card at srv's well-known path, with the request as set
// leaves it, and returns the response with its body read.
func getCard(t *testing.T, srv *httptest.Server, set func(*http.Request)) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(http.MethodGet, srv.URL+agentcard.WellKnownPath, nil)
	if err != nil {
		t.Fatal(err)
	}
	set(req)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return resp, body
}
