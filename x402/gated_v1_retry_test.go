package x402_test

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// TestMiddleware_gatedRetryOfSecondAsset: on a gated route with two
// offers on one network that differ only in asset, a version 1 proof (it
// names no asset) that paid the second offer, delivered and settled, is
// sent again, its answer lost on the way: the retry gets the outcome the
// route kept, with an Idempotency-Key or without one, where no offer
// verifies the spent proof any more.
func TestMiddleware_gatedRetryOfSecondAsset(t *testing.T) {
	t.Run("with an Idempotency-Key", func(t *testing.T) { gatedRetryOfSecondAsset(t, "k-1") })
	t.Run("without an Idempotency-Key", func(t *testing.T) { gatedRetryOfSecondAsset(t, "") })
}

// gatedRetryOfSecondAsset pays the second of two offers and sends its
// proof again, with key as the Idempotency-Key of both requests (none
// when empty).
func gatedRetryOfSecondAsset(t *testing.T, key string) {
	usdc := offer(t)
	other := usdc
	other.Asset = "0x1111111111111111111111111111111111111111"
	other.Extra = map[string]any{"name": "EURC", "version": "2"}
	fac := &evm.Facilitator{}
	gate := &x402.DeliveryGate{Check: func(context.Context, *http.Request, []byte, *x402.BufferedResponse) x402.Delivery {
		return x402.Delivery{Deliver: true}
	}}
	mw, err := x402.Middleware(x402.MiddlewareConfig{
		Facilitator: fac,
		Routes:      map[string]x402.Price{"POST /paid": {Accepts: []x402.PaymentRequirements{usdc, other}, Gate: gate}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var proof string
	paid := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "the answer") }))
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if v := r.Header.Get(x402.HeaderXPayment); v != "" {
			proof = v
		}
		paid.ServeHTTP(v1Writer{w}, r) // version 1 terms only
	}))
	defer srv.Close()

	payer, err := evm.NewPayer(testKey)
	if err != nil {
		t.Fatal(err)
	}
	client := &http.Client{Transport: &x402.Transport{Payer: payer, Policy: x402.Policy{Assets: []string{other.Asset}}}}
	first, _ := http.NewRequest("POST", srv.URL+"/paid", bytes.NewReader([]byte("q")))
	if key != "" {
		first.Header.Set(x402.HeaderIdempotencyKey, key)
	}
	resp, err := client.Do(first)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != 200 || len(fac.Settlements()) != 1 {
		t.Fatalf("first use: %d %q, %d settlements", resp.StatusCode, body, len(fac.Settlements()))
	}

	// The answer was lost on the way: the payer sends the same proof again.
	req, _ := http.NewRequest("POST", srv.URL+"/paid", bytes.NewReader([]byte("q")))
	req.Header.Set(x402.HeaderXPayment, proof)
	if key != "" {
		req.Header.Set(x402.HeaderIdempotencyKey, key)
	}
	resp, err = http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ = io.ReadAll(resp.Body)
	resp.Body.Close()
	t.Logf("retry: %d %s", resp.StatusCode, body)
	if resp.StatusCode != 200 || string(body) != "the answer" {
		t.Fatalf("the retry of a settled proof got %d, not the kept answer it paid for", resp.StatusCode)
	}
}
