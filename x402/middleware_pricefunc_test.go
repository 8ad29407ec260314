package x402_test

import (
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// TestMiddleware_priceFuncWithoutOffersIsNotFree: a PriceFunc that
// reports a request priced but gives its price no offers (a price table
// with a hole in it) has priced it with a price no payer can pay: the
// request is a server error, 503, and the handler never runs, rather
// than being served for free.
func TestMiddleware_priceFuncWithoutOffersIsNotFree(t *testing.T) {
	mw, err := x402.Middleware(x402.MiddlewareConfig{
		Facilitator: &evm.Facilitator{},
		PriceFunc: func(r *http.Request) (x402.Price, bool) {
			if r.URL.Path == "/paid" {
				return x402.Price{Description: "a paid answer"}, true
			}
			return x402.Price{}, false
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	var served atomic.Int32
	srv := httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		served.Add(1)
		io.WriteString(w, "work done")
	})))
	t.Cleanup(srv.Close)
	var got []any
	for _, path := range []string{"/paid", "/free"} {
		resp, err := http.Post(srv.URL+path, "text/plain", strings.NewReader("x"))
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		got = append(got, resp.StatusCode)
	}
	got = append(got, served.Load())
	if diff := cmp.Diff([]any{http.StatusServiceUnavailable, http.StatusOK, int32(1)}, got); diff != "" {
		t.Errorf("statuses of /paid and /free, then handler runs (-want +got):\n%s", diff)
	}
}
