package pgstore_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// TestPaymentStores_keysTextCannotHold sends proofs whose authorization
// holds a NUL (JSON's \u0000) in its nonce or its from, which name the
// payment's keys before the facilitator checks them, to a route on the
// in-memory stores and to one on the database's. Both refuse them as
// the facilitator does, 402; the database's were 503 unavailable, the
// answer of a database that is down, which clients retry. The stores
// keep such keys apart from every other, one that looks like their
// escaped form included.
func TestPaymentStores_keysTextCannotHold(t *testing.T) {
	db := openDB(t)
	offer, err := evm.USDC("base-sepolia", "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", "$0.001")
	if err != nil {
		t.Fatal(err)
	}
	payer, err := evm.NewPayer(testPayerKey)
	if err != nil {
		t.Fatal(err)
	}
	route := x402.Price{Accepts: []x402.PaymentRequirements{offer}, PaymentIdentifier: &x402.PaymentIdentifier{}}
	serve := func(cfg x402.MiddlewareConfig) string {
		cfg.Facilitator = &evm.Facilitator{}
		cfg.Routes = map[string]x402.Price{"GET /paid": route}
		mw, err := x402.Middleware(cfg)
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			io.WriteString(w, "paid for")
		})))
		t.Cleanup(srv.Close)
		return srv.URL
	}
	urls := map[string]string{
		"memory":   serve(x402.MiddlewareConfig{Replay: &x402.MemoryReplay{}, PaymentIDs: &x402.MemoryPaymentIDs{}}),
		"database": serve(x402.MiddlewareConfig{Replay: db.Replay(), Outcomes: db.Outcomes(), PaymentIDs: db.PaymentIDs()}),
	}
	send := func(url, field string, withID bool) int {
		proof, err := payer.Pay(context.Background(), offer)
		if err != nil {
			t.Fatal(err)
		}
		payload := strings.Replace(string(proof.Payload), `"`+field+`":"0x`, `"`+field+`":"0x\u0000`, 1)
		if payload == string(proof.Payload) {
			t.Fatalf("the payload %s has no %s", proof.Payload, field)
		}
		v := map[string]any{"x402Version": 2, "accepted": offer, "payload": json.RawMessage(payload)}
		if withID {
			v["extensions"] = map[string]any{"payment-identifier": map[string]any{"info": map[string]any{"id": "pay_0123456789abcdef"}}}
		}
		h, err := x402.EncodeHeader(v)
		if err != nil {
			t.Fatal(err)
		}
		req, err := http.NewRequest(http.MethodGet, url+"/paid", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set(x402.HeaderPaymentSignature, h)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode
	}
	type sent struct {
		Field  string
		WithID bool
	}
	got := map[string]map[sent]int{}
	for name, url := range urls {
		got[name] = map[sent]int{}
		for _, s := range []sent{{"nonce", false}, {"from", false}, {"from", true}} {
			got[name][s] = send(url, s.Field, s.WithID)
		}
	}
	want := map[sent]int{{"nonce", false}: 402, {"from", false}: 402, {"from", true}: 402}
	for name := range urls {
		if diff := cmp.Diff(want, got[name]); diff != "" {
			t.Errorf("%s stores: status by proof (-want +got):\n%s", name, diff)
		}
	}

	// Straight to the stores: a key a text column cannot hold is kept,
	// and is not the key that spells its escaped form.
	ctx := context.Background()
	now := time.Now()
	until := now.Add(time.Hour)
	replay := db.Replay()
	var reserved []bool
	for _, key := range []string{"eip3009:a\x00b", "eip3009:a\x00b", "eip3009:\xff", "\x01" + "6569703330303a61006200", "\x01" + "6569703330303a61006200"} {
		ok, err := replay.Reserve(ctx, key, now, until)
		if err != nil {
			t.Fatalf("Reserve(%q) = %v", key, err)
		}
		reserved = append(reserved, ok)
	}
	if diff := cmp.Diff([]bool{true, false, true, true, false}, reserved); diff != "" {
		t.Errorf("Reserve reported (-want +got):\n%s", diff)
	}
	sp := x402.SettledPayment{Request: "r", Settlement: x402.SettleResponse{Success: true, Transaction: "0x1"}}
	if err := replay.MarkSettled(ctx, "eip3009:a\x00b", sp); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := replay.LookupSettled(ctx, "eip3009:a\x00b", now); err != nil || !ok || !cmp.Equal(got, sp) {
		t.Errorf("LookupSettled = %+v, %v, %v; want %+v, true, nil", got, ok, err, sp)
	}
	answers := db.Answers()
	if err := answers.Keep(ctx, "k\x00", "", []byte(`{"a":1}`), until); err != nil {
		t.Fatal(err)
	}
	if got, ok, err := answers.Answer(ctx, "k\x00", now); err != nil || !ok || string(got) != `{"a":1}` {
		t.Errorf("Answer = %s, %v, %v; want the kept answer", got, ok, err)
	}
}
