package agentcard_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/vouchkit/vouch/trust/agentcard"
)

// TestHandler_etag: the card is served with an ETag, as the A2A
// specification's caching asks of an agent card endpoint, and a request
// that names it in If-None-Match is answered 304 without a body; a card
// of other content (another base URL) has another ETag.
func TestHandler_etag(t *testing.T) {
	srv := httptest.NewServer(agentcard.Handler(agentcard.Config{}))
	defer srv.Close()
	get := func(host, etag string) (*http.Response, []byte) {
		return getCard(t, srv, func(req *http.Request) {
			req.Host = host
			if etag != "" {
				req.Header.Set("If-None-Match", etag)
			}
		})
	}
	resp, body := get("a.example", "")
	etag := resp.Header.Get("ETag")
	if resp.StatusCode != http.StatusOK || len(body) == 0 || etag == "" {
		t.Fatalf("GET: %s, ETag %q, %d bytes, want 200 with an ETag and the card", resp.Status, etag, len(body))
	}
	resp, body = get("a.example", etag)
	if resp.StatusCode != http.StatusNotModified || len(body) != 0 || resp.Header.Get("ETag") != etag {
		t.Errorf("GET If-None-Match %s: %s, ETag %q, %d bytes, want 304 with the ETag and no body", etag, resp.Status, resp.Header.Get("ETag"), len(body))
	}
	resp, body = get("b.example", etag)
	if resp.StatusCode != http.StatusOK || len(body) == 0 || resp.Header.Get("ETag") == etag {
		t.Errorf("another base URL, If-None-Match %s: %s, ETag %q, want 200 with the card and another ETag", etag, resp.Status, resp.Header.Get("ETag"))
	}
}
