package x402_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// The outcomes of a MemoryOutcomes expire by the Middleware's clock, the
// one its Lookup is given, whether the clock runs ahead of the wall clock
// or behind it, and whether the store is the Middleware's own or given.
func TestGate_outcomesKeptByMiddlewareClock(t *testing.T) {
	for _, tc := range []struct {
		name     string
		skew     time.Duration
		outcomes x402.OutcomeStore
	}{
		{"ahead, own store", 2 * time.Hour, nil},
		{"behind, own store", -2 * time.Hour, nil},
		{"ahead, given store", 2 * time.Hour, &x402.MemoryOutcomes{}},
		{"behind, given store", -2 * time.Hour, &x402.MemoryOutcomes{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			clk := newClock(time.Now().Add(tc.skew))
			refuse := func(context.Context, *http.Request, []byte, *x402.BufferedResponse) x402.Delivery {
				return x402.Delivery{Refusal: x402.BufferedResponse{Status: http.StatusBadGateway, Body: []byte("refused")}}
			}
			mw, err := x402.Middleware(x402.MiddlewareConfig{
				Facilitator: &evm.Facilitator{Now: clk.Now},
				Routes:      map[string]x402.Price{"POST /gated": {Accepts: []x402.PaymentRequirements{offer(t)}, Gate: &x402.DeliveryGate{Check: refuse}}},
				Outcomes:    tc.outcomes,
				Now:         clk.Now,
			})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "work") })))
			t.Cleanup(srv.Close)
			payer := newPayer(t)
			payer.Payer.Now = clk.Now
			c := &http.Client{Transport: &x402.Transport{Payer: payer, Now: clk.Now}}
			post := func(key string) (int, string) {
				t.Helper()
				req, _ := http.NewRequest(http.MethodPost, srv.URL+"/gated", strings.NewReader("x"))
				req.Header.Set(x402.HeaderIdempotencyKey, key)
				resp, err := c.Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				b, _ := io.ReadAll(resp.Body)
				return resp.StatusCode, string(b)
			}
			// Two payments, then the retry of the first: its outcome is
			// neither capped to the wall clock nor dropped as expired
			// by it when the second is kept.
			for _, key := range []string{"call-1", "call-2", "call-1"} {
				if status, body := post(key); status != http.StatusBadGateway || body != "refused" {
					t.Fatalf("%s: %d %q, want the kept refusal 502 \"refused\"", key, status, body)
				}
			}
			if n := payer.n.Load(); n != 2 {
				t.Errorf("%d payments made, want 2", n)
			}
		})
	}
}
