package x402_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/x402"
)

// TestFacilitatorClient_urlWithQuery: a facilitator URL that carries a
// query string (a key some facilitators take there) has each operation
// appended to its path, and the query sent with every request, rather
// than the operation written after the query, where all three
// operations would reach one path.
func TestFacilitatorClient_urlWithQuery(t *testing.T) {
	var mu sync.Mutex
	var got []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		got = append(got, r.Method+" "+r.URL.Path+"?"+r.URL.RawQuery)
		mu.Unlock()
		switch r.URL.Path {
		case "/fac/verify":
			io.WriteString(w, `{"isValid":true,"payer":"0xabc"}`)
		case "/fac/settle":
			io.WriteString(w, `{"success":true,"transaction":"0x01","network":"eip155:84532","payer":"0xabc"}`)
		case "/fac/supported":
			io.WriteString(w, `{"kinds":[]}`)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()
	c := &x402.FacilitatorClient{URL: srv.URL + "/fac?key=k%2F1"}
	p := &x402.PaymentPayload{X402Version: 2, Accepted: offer(t), Payload: []byte(`{}`)}
	if _, err := c.Verify(t.Context(), p, offer(t)); err != nil {
		t.Errorf("Verify: %v", err)
	}
	if _, err := c.Settle(t.Context(), p, offer(t)); err != nil {
		t.Errorf("Settle: %v", err)
	}
	if _, err := c.Supported(t.Context()); err != nil {
		t.Errorf("Supported: %v", err)
	}
	want := []string{"POST /fac/verify?key=k%2F1", "POST /fac/settle?key=k%2F1", "GET /fac/supported?key=k%2F1"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("requests (-want +got):\n%s", diff)
	}
	bad := &x402.FacilitatorClient{URL: "http://[::1"}
	if _, err := bad.Supported(t.Context()); err == nil {
		t.Error("Supported with an unparsable URL: no error")
	}
}
