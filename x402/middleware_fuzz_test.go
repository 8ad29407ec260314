package x402_test

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// validCounting is a facilitator that counts the payments it verifies
// as valid.
type validCounting struct {
	evm.Facilitator
	valid int
}

func (f *validCounting) Verify(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.VerifyResponse, error) {
	vr, err := f.Facilitator.Verify(ctx, p, r)
	if err == nil && vr.IsValid {
		f.valid++
	}
	return vr, err
}

// FuzzMiddleware sends any proof header, in either version's header and
// with any Idempotency-Key, to a paid route: the paid handler runs only
// on a payment the facilitator verified, and every other answer is a 400
// problem or a 402 whose PAYMENT-REQUIRED terms decode, never a 5xx.
func FuzzMiddleware(f *testing.F) {
	o, err := evm.USDC("base-sepolia", "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", "$0.001")
	if err != nil {
		f.Fatal(err)
	}
	payer, err := evm.NewPayer("0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318")
	if err != nil {
		f.Fatal(err)
	}
	for _, seed := range []struct {
		v   int
		key string
	}{{x402.Version1, ""}, {x402.Version2, ""}, {x402.Version2, "key-1"}} {
		proof, err := payer.Pay(context.Background(), o) // a proof of its own: a proof pays once
		if err != nil {
			f.Fatal(err)
		}
		signed, err := x402.EncodeHeader(x402.PaymentPayload{X402Version: seed.v, Accepted: o, Payload: proof.Payload})
		if err != nil {
			f.Fatal(err)
		}
		f.Add(seed.v == x402.Version1, signed, seed.key)
	}
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	f.Add(false, b64(`{"x402Version":2,"accepted":{"scheme":"exact","network":"eip155:84532","amount":"1000"},"payload":{},"extensions":{"payment-identifier":{"info":{"id":"pay_0123456789abcdef"}}}}`), "")
	f.Add(true, b64(`{"x402Version":1,"scheme":"exact","network":"base-sepolia","payload":{"authorization":{"validBefore":"99999999999"}}}`), "k")
	f.Add(false, "@@@@", "")
	fac := &validCounting{}
	mw, err := x402.Middleware(x402.MiddlewareConfig{
		Facilitator: fac,
		Routes:      map[string]x402.Price{"POST /paid": {Accepts: []x402.PaymentRequirements{o}, Description: "a paid echo"}},
	})
	if err != nil {
		f.Fatal(err)
	}
	ran := 0
	h := mw(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		ran++
		w.Write([]byte("paid"))
	}))
	f.Fuzz(func(t *testing.T, v1 bool, value, key string) {
		if strings.ContainsAny(value+key, "\r\n\x00") {
			return // not header values
		}
		ran, fac.valid = 0, 0
		r := httptest.NewRequest(http.MethodPost, "/paid", strings.NewReader("hello"))
		name := x402.HeaderPaymentSignature
		if v1 {
			name = x402.HeaderXPayment
		}
		r.Header.Set(name, value)
		if key != "" {
			r.Header.Set(x402.HeaderIdempotencyKey, key)
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		switch {
		case ran > 0 && fac.valid == 0:
			t.Fatalf("%s %q: the paid handler ran on a payment not verified", name, value)
		case ran > 0:
		case w.Code == http.StatusBadRequest:
			var p problem.Details
			if json.Unmarshal(w.Body.Bytes(), &p) != nil || p.Status != 400 {
				t.Fatalf("%s %q: 400 %q, not a problem", name, value, w.Body)
			}
		case w.Code == http.StatusPaymentRequired:
			if pr, err := x402.DecodePaymentRequired(w.Header().Get(x402.HeaderPaymentRequired)); err != nil || len(pr.Accepts) == 0 {
				t.Fatalf("%s %q: 402 without terms: %v", name, value, err)
			}
		default:
			t.Fatalf("%s %q (key %q): %d %q", name, value, key, w.Code, w.Body)
		}
	})
}
