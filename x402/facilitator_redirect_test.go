package x402_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/vouchkit/vouch/x402"
)

// TestFacilitatorClient_redirect checks that a redirect to another host is
// refused: the request carries the payment proof, a bearer instrument
// until settled, and the headers Prepare adds, which net/http would pass
// on to any host (it drops only Authorization and cookies).
func TestFacilitatorClient_redirect(t *testing.T) {
	var reached atomic.Int32
	var gotKey atomic.Value
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		reached.Add(1)
		gotKey.Store(r.Header.Get("X-Api-Key"))
		io.WriteString(w, `{"isValid":true,"payer":"0xabc"}`)
	}))
	defer other.Close()
	// Another host name for the same loopback address.
	elsewhere := strings.Replace(other.URL, "127.0.0.1", "localhost", 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		io.Copy(io.Discard, r.Body)
		http.Redirect(w, r, elsewhere+r.URL.Path, http.StatusTemporaryRedirect)
	}))
	defer srv.Close()
	c := &x402.FacilitatorClient{URL: srv.URL, Prepare: func(r *http.Request) error {
		r.Header.Set("X-Api-Key", "facilitator-secret")
		return nil
	}}
	p := &x402.PaymentPayload{X402Version: 2, Accepted: offer(t), Payload: []byte(`{"signature":"0x01"}`)}
	if vr, err := c.Verify(t.Context(), p, offer(t)); err == nil {
		t.Errorf("Verify = %+v, want an error: the facilitator redirected to another host", vr)
	}
	if n := reached.Load(); n != 0 {
		k, _ := gotKey.Load().(string)
		t.Errorf("the other host got %d request(s) with the proof, X-Api-Key %q", n, k)
	}
}
