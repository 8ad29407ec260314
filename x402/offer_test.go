package x402_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

func TestPrice_Match(t *testing.T) {
	o := offer(t)
	price := x402.Price{Accepts: []x402.PaymentRequirements{o}}
	v2 := &x402.PaymentPayload{X402Version: x402.Version2, Accepted: o}
	v2.Accepted.Network = "eip155:84532"
	got, ok := price.Match(v2)
	if !ok || got.Network != "eip155:84532" || got.Amount != o.Amount {
		t.Errorf("Match(v2 proof of the offer) = %+v, %v; want the offer in the proof's naming", got, ok)
	}
	under := *v2
	under.Accepted.Amount = "1"
	if _, ok := price.Match(&under); ok {
		t.Error("Match accepted a version 2 proof of another amount")
	}
	v1 := &x402.PaymentPayload{X402Version: x402.Version1, Accepted: x402.PaymentRequirements{Scheme: o.Scheme, Network: "base-sepolia"}}
	if got, ok := price.Match(v1); !ok || got.Amount != o.Amount {
		t.Errorf("Match(v1 proof naming scheme and network) = %+v, %v; want the offer", got, ok)
	}
}

// A proof reserved under ReplayKey outside HTTP (as a payment carried in
// MCP's _meta is) is refused by a Middleware sharing the replay store:
// the key is the one the Middleware uses.
func TestReplayKey_sharedWithMiddleware(t *testing.T) {
	ctx := context.Background()
	o := offer(t)
	payer, err := evm.NewPayer(testKey)
	if err != nil {
		t.Fatal(err)
	}
	proof, err := payer.Pay(ctx, o)
	if err != nil {
		t.Fatal(err)
	}
	p := &x402.PaymentPayload{X402Version: x402.Version2, Accepted: o, Payload: proof.Payload}
	now := time.Now()
	key, until := x402.ReplayKey(p, o, now)
	if key2, _ := x402.ReplayKey(p, o, now); key2 != key || !until.After(now) {
		t.Fatalf("ReplayKey = %q until %v, then %q: want one stable key held into the future", key, until, key2)
	}
	replay := &x402.MemoryReplay{}
	if fresh, err := replay.Reserve(ctx, key, now, until); err != nil || !fresh {
		t.Fatalf("Reserve = %v, %v", fresh, err)
	}

	mw, err := x402.Middleware(x402.MiddlewareConfig{
		Facilitator: &evm.Facilitator{},
		Routes:      map[string]x402.Price{"POST /paid": {Accepts: []x402.PaymentRequirements{o}}},
		Replay:      replay,
	})
	if err != nil {
		t.Fatal(err)
	}
	var ran atomic.Bool
	srv := httptest.NewServer(mw(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { ran.Store(true) })))
	defer srv.Close()
	header, err := x402.EncodeHeader(p)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/paid", nil)
	req.Header.Set(x402.HeaderPaymentSignature, header)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	pr, _ := x402.ReadPaymentRequired(resp)
	if resp.StatusCode != http.StatusPaymentRequired || ran.Load() || pr == nil || pr.Error != "the payment was already used" {
		t.Errorf("the reserved proof over HTTP: %d, ran %v, terms %+v; want 402 already used", resp.StatusCode, ran.Load(), pr)
	}
}

func TestPaymentPayload_AuthorizationValidBefore(t *testing.T) {
	o := offer(t)
	payer, err := evm.NewPayer(testKey)
	if err != nil {
		t.Fatal(err)
	}
	at := time.Unix(1_800_000_000, 0)
	payer.Now = func() time.Time { return at }
	proof, err := payer.Pay(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	p := &x402.PaymentPayload{X402Version: x402.Version2, Accepted: o, Payload: proof.Payload}
	want := at.Add(time.Duration(o.MaxTimeoutSeconds) * time.Second)
	if got, ok := p.AuthorizationValidBefore(); !ok || !got.Equal(want) {
		t.Errorf("AuthorizationValidBefore = %v, %v; want %v", got, ok, want)
	}
	other := &x402.PaymentPayload{X402Version: x402.Version2, Accepted: o, Payload: []byte(`{"signature":"0x00"}`)}
	if _, ok := other.AuthorizationValidBefore(); ok {
		t.Error("AuthorizationValidBefore found an authorization in a payload without one")
	}
}

// A proof that no EVM scheme names (a Solana transaction, say) is held
// by its JSON: the same payload written with its members in another
// order, other spacing or other escapes is the same proof, and another
// payload is not.
func TestReplayKey_payloadWrittenOtherwise(t *testing.T) {
	o := x402.PaymentRequirements{Scheme: "exact", Network: "solana:EtWTRABZaYq6iMfeYKouRu166VU2xqa1", Asset: "EPjFWJd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v", Amount: "1000", PayTo: "2wKupLR9q6wXYppw8Gr2NvWxKBUqm4PPJKkQfoxHDBg4", MaxTimeoutSeconds: 60}
	now := time.Now()
	key := func(payload string) string {
		k, _ := x402.ReplayKey(&x402.PaymentPayload{X402Version: x402.Version2, Accepted: o, Payload: []byte(payload)}, o, now)
		return k
	}
	want := key(`{"transaction":"AQID","memo":{"id":7,"note":"a"}}`)
	for _, same := range []string{
		`{"memo":{"note":"a","id":7},"transaction":"AQID"}`,
		"{ \"transaction\" : \"AQID\",\n \"memo\": {\"id\": 7, \"note\": \"\\u0061\"} }",
	} {
		if got := key(same); got != want {
			t.Errorf("ReplayKey(%s) = %q, want %q: the same payload written otherwise", same, got, want)
		}
	}
	for _, other := range []string{
		`{"transaction":"AQIE","memo":{"id":7,"note":"a"}}`,
		`{"transaction":"AQID","memo":{"id":70,"note":"a"}}`,
		`{"transaction":"AQID","memo":{"id":"7","note":"a"}}`,
	} {
		if got := key(other); got == want {
			t.Errorf("ReplayKey(%s) = %q, the key of another payload", other, got)
		}
	}
}
