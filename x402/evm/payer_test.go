package evm_test

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

const testKey = "4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"

var t0 = time.Unix(1_800_000_000, 0)

func usdcOffer(t *testing.T) x402.PaymentRequirements {
	t.Helper()
	o, err := evm.USDC("eip155:84532", "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", "$0.001")
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func TestPayer_Pay(t *testing.T) {
	p, err := evm.NewPayer("0x" + testKey)
	if err != nil {
		t.Fatal(err)
	}
	p.Now = func() time.Time { return t0 }
	p.Rand = bytes.NewReader(bytes.Repeat([]byte{0xab}, 32))
	o := usdcOffer(t)
	pr, err := p.Pay(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	var ep evm.ExactPayload
	if err := json.Unmarshal(pr.Payload, &ep); err != nil {
		t.Fatal(err)
	}
	a := ep.Authorization
	want := evm.Authorization{
		From: p.Address().String(), To: "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", Value: "1000",
		ValidAfter: "1799999400", ValidBefore: "1800000060", Nonce: "0x" + strings.Repeat("ab", 32),
	}
	if a != want {
		t.Errorf("authorization = %+v\nwant %+v", a, want)
	}
	if pr.Reference != want.From+":"+want.Nonce {
		t.Errorf("reference = %q", pr.Reference)
	}
	if len(ep.Signature) != 2+130 || !(strings.HasSuffix(ep.Signature, "1b") || strings.HasSuffix(ep.Signature, "1c")) {
		t.Errorf("signature %s is not 65 bytes ending in v 27 or 28", ep.Signature)
	}
	digest, _ := evm.TransferDigest(evm.Domain{Name: "USDC", Version: "2", ChainID: 84532, VerifyingContract: o.Asset}, a)
	if got, err := evm.RecoverHex(digest, ep.Signature); err != nil || got != p.Address() {
		t.Errorf("signature recovers to %s, %v; want %s", got, err, p.Address())
	}
}

func TestPayer_Supports(t *testing.T) {
	p, _ := evm.NewPayer(testKey)
	for _, tc := range []struct {
		name   string
		mutate func(o *x402.PaymentRequirements)
		want   bool
	}{
		{"usdc", func(*x402.PaymentRequirements) {}, true},
		{"v1 network name", func(o *x402.PaymentRequirements) { o.Network = "base-sepolia" }, true},
		{"solana", func(o *x402.PaymentRequirements) { o.Network = "solana-devnet" }, false},
		{"upto", func(o *x402.PaymentRequirements) { o.Scheme = "upto" }, false},
		{"no domain", func(o *x402.PaymentRequirements) { o.Extra = nil }, false},
		{"bad payTo", func(o *x402.PaymentRequirements) { o.PayTo = "merchant" }, false},
		{"eip3009 named", func(o *x402.PaymentRequirements) { o.Extra["assetTransferMethod"] = "eip3009" }, true},
		{"permit2 asked", func(o *x402.PaymentRequirements) { o.Extra["assetTransferMethod"] = "permit2" }, false},
		{"unknown method", func(o *x402.PaymentRequirements) { o.Extra["assetTransferMethod"] = "erc7710" }, false},
		{"method not a string", func(o *x402.PaymentRequirements) { o.Extra["assetTransferMethod"] = 1.0 }, false},
	} {
		o := usdcOffer(t)
		tc.mutate(&o)
		if got := p.Supports(o); got != tc.want {
			t.Errorf("%s: Supports = %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestParsePrivateKey(t *testing.T) {
	for _, tc := range []struct {
		in string
		ok bool
	}{
		{testKey, true},
		{" 0x" + testKey + "\n", true},
		{testKey[:62], false},
		{strings.Repeat("0", 64), false},
		{strings.Repeat("f", 64), false}, // above the curve order
		{"0x" + strings.Repeat("g", 64), false},
	} {
		k, err := evm.ParsePrivateKey(tc.in)
		if (err == nil) != tc.ok {
			t.Errorf("ParsePrivateKey(%q) err = %v, want ok %v", tc.in, err, tc.ok)
		}
		if err == nil && strings.Contains(k.String()+k.GoString(), testKey) {
			t.Error("the key's description contains the key")
		}
	}
}

func TestUSDC(t *testing.T) {
	o := usdcOffer(t)
	if o.Amount != "1000" || o.Asset != "0x036CbD53842c5426634e7929541eC2318f3dCF7e" || o.ExtraString("name") != "USDC" || o.ExtraString("version") != "2" || o.Network != "eip155:84532" || o.MaxTimeoutSeconds != 60 {
		t.Errorf("USDC offer = %+v", o)
	}
	if _, err := evm.USDC("eip155:43113", o.PayTo, "$0.001"); err == nil {
		t.Error("USDC on a network without a known contract: want an error")
	}
	if _, err := evm.USDC("base", "0x12", "$0.001"); err == nil {
		t.Error("USDC with a bad payTo: want an error")
	}
}

// TestPayer_Pay_timeoutBeyondDuration checks that an offer whose
// maxTimeoutSeconds no time.Duration holds is refused, not signed as an
// authorization whose window wrapped around into the past.
func TestPayer_Pay_timeoutBeyondDuration(t *testing.T) {
	p, err := evm.NewPayer("0x" + testKey)
	if err != nil {
		t.Fatal(err)
	}
	p.Now = func() time.Time { return t0 }
	o := usdcOffer(t)
	o.MaxTimeoutSeconds = 1 << 40
	if pr, err := p.Pay(t.Context(), o); err == nil || !strings.Contains(err.Error(), "maxTimeoutSeconds") {
		t.Errorf("Pay = %s, %v; want an error naming maxTimeoutSeconds", pr.Payload, err)
	}
}
