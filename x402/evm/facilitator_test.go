package evm_test

import (
	"encoding/json"
	"sync"
	"testing"
	"time"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

func signed(t *testing.T, o x402.PaymentRequirements, version int) *x402.PaymentPayload {
	t.Helper()
	p, _ := evm.NewPayer(testKey)
	p.Now = func() time.Time { return t0 }
	pr, err := p.Pay(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	return &x402.PaymentPayload{X402Version: version, Accepted: o, Payload: pr.Payload}
}

func TestFacilitator_Verify(t *testing.T) {
	now := func() time.Time { return t0.Add(time.Second) }
	for _, tc := range []struct {
		name  string
		f     *evm.Facilitator
		offer func(o *x402.PaymentRequirements) // the server's offer, changed after signing
		auth  func(a *evm.Authorization)        // the proof, changed after signing
		want  string                            // "" for valid
	}{
		{"valid", &evm.Facilitator{Now: now}, nil, nil, ""},
		{"value above price", &evm.Facilitator{Now: now}, func(o *x402.PaymentRequirements) { o.Amount = "999" }, nil, ""},
		{"price above value", &evm.Facilitator{Now: now}, func(o *x402.PaymentRequirements) { o.Amount = "1001" }, nil, evm.ReasonValue},
		{"other payTo", &evm.Facilitator{Now: now}, func(o *x402.PaymentRequirements) { o.PayTo = "0x857b06519E91e3A54538791bDbb0E22373e36b66" }, nil, evm.ReasonRecipient},
		{"other asset", &evm.Facilitator{Now: now}, func(o *x402.PaymentRequirements) { o.Asset = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913" }, nil, evm.ReasonAssetMismatch},
		{"other domain name", &evm.Facilitator{Now: now}, func(o *x402.PaymentRequirements) { o.Extra = map[string]any{"name": "USD Coin", "version": "2"} }, nil, evm.ReasonSignature},
		{"mainnet refused", &evm.Facilitator{Now: now}, func(o *x402.PaymentRequirements) { o.Network = "eip155:8453" }, nil, evm.ReasonInvalidNetwork},
		{"not yet valid", &evm.Facilitator{Now: func() time.Time { return t0.Add(-11 * time.Minute) }}, nil, nil, evm.ReasonValidAfter},
		{"at validAfter", &evm.Facilitator{Now: func() time.Time { return t0.Add(-evm.ValidAfterSlack) }}, nil, nil, evm.ReasonValidAfter},
		{"just after validAfter", &evm.Facilitator{Now: func() time.Time { return t0.Add(-evm.ValidAfterSlack + time.Second) }}, nil, nil, ""},
		{"expired", &evm.Facilitator{Now: func() time.Time { return t0.Add(61 * time.Second) }}, nil, nil, evm.ReasonValidBefore},
		{"from changed", &evm.Facilitator{Now: now}, nil, func(a *evm.Authorization) { a.From = "0x857b06519E91e3A54538791bDbb0E22373e36b66" }, evm.ReasonSignature},
		{"nonce changed", &evm.Facilitator{Now: now}, nil, func(a *evm.Authorization) { a.Nonce = "0x" + otherByte(a.Nonce[2:4]) + a.Nonce[4:] }, evm.ReasonSignature},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := usdcOffer(t)
			p := signed(t, o, 2)
			if tc.auth != nil {
				var ep evm.ExactPayload
				json.Unmarshal(p.Payload, &ep)
				tc.auth(&ep.Authorization)
				p.Payload, _ = json.Marshal(ep)
			}
			if tc.offer != nil {
				tc.offer(&o)
				p.Accepted.Network = o.Network
				if tc.want != evm.ReasonAssetMismatch {
					p.Accepted.Asset = o.Asset
				}
			}
			vr, err := tc.f.Verify(t.Context(), p, o)
			if err != nil {
				t.Fatal(err)
			}
			if vr.IsValid != (tc.want == "") || vr.InvalidReason != tc.want {
				t.Errorf("Verify = %+v, want reason %q", vr, tc.want)
			}
		})
	}
}

func TestFacilitator_SettleOnce(t *testing.T) {
	f := &evm.Facilitator{Now: func() time.Time { return t0 }}
	o := usdcOffer(t)
	o1 := o
	o1.Network = "base-sepolia"
	p := signed(t, o1, 1) // a version 1 proof, named by network name
	var wg sync.WaitGroup
	results := make([]*x402.SettleResponse, 8)
	for i := range results {
		wg.Go(func() {
			sr, err := f.Settle(t.Context(), p, o1)
			if err != nil {
				t.Error(err)
			}
			results[i] = sr
		})
	}
	wg.Wait()
	ok := 0
	for _, sr := range results {
		if sr.Success {
			ok++
			if sr.Network != "base-sepolia" || sr.Amount != "1000" || len(sr.Transaction) != 66 {
				t.Errorf("settlement = %+v", sr)
			}
		} else if sr.ErrorReason != evm.ReasonNonceAlreadyUsed {
			t.Errorf("failed settlement reason = %q, want %q", sr.ErrorReason, evm.ReasonNonceAlreadyUsed)
		}
	}
	if ok != 1 || len(f.Settlements()) != 1 {
		t.Errorf("%d settlements succeeded, %d recorded; want 1 and 1", ok, len(f.Settlements()))
	}
	if vr, _ := f.Verify(t.Context(), p, o1); vr.IsValid || vr.InvalidReason != evm.ReasonNonceAlreadyUsed {
		t.Errorf("Verify after settlement = %+v, want nonce already used", vr)
	}
}

func FuzzFacilitatorVerify(f *testing.F) {
	f.Add([]byte(`{"signature":"0x00","authorization":{"from":"0x857b06519E91e3A54538791bDbb0E22373e36b66","to":"0x209693Bc6afc0C5328bA36FaF03C514EF312287C","value":"1000","validAfter":"0","validBefore":"99999999999","nonce":"0x00"}}`))
	f.Fuzz(func(t *testing.T, payload []byte) {
		fac := &evm.Facilitator{Now: func() time.Time { return t0 }}
		o, _ := evm.USDC("base-sepolia", "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", "$0.001")
		vr, err := fac.Verify(t.Context(), &x402.PaymentPayload{X402Version: 2, Accepted: o, Payload: payload}, o)
		if err != nil || vr == nil {
			t.Fatalf("Verify = %v, %v; want an answer", vr, err)
		}
		if vr.IsValid {
			t.Fatalf("fuzzed payload %q verified", payload) // nothing random holds a valid signature
		}
	})
}

// otherByte returns a hex byte other than b: the nonce is random, and its
// first byte is "00" one time in 256.
// A signature whose v is 0 or 1, which Recover reads as 27 or 28, is
// refused in an "exact" and an "upto" proof alike, as USDC's ECRecover
// reverts on it and Permit2's ecrecover recovers no signer from it.
func TestFacilitator_signatureVIs27Or28(t *testing.T) {
	at := t0.Add(time.Second)
	for _, tc := range []struct {
		name  string
		f     *evm.Facilitator
		offer x402.PaymentRequirements
		want  string
	}{
		{"exact", &evm.Facilitator{Now: func() time.Time { return at }}, usdcOffer(t), evm.ReasonSignature},
		{"upto", uptoFacilitator(at), uptoOffer(t), evm.ReasonPermit2Signature},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := signed(t, tc.offer, 2)
			if vr, err := tc.f.Verify(t.Context(), p, tc.offer); err != nil || !vr.IsValid {
				t.Fatalf("the proof as signed: %+v, %v", vr, err)
			}
			var fields map[string]any
			if err := json.Unmarshal(p.Payload, &fields); err != nil {
				t.Fatal(err)
			}
			fields["signature"] = lowV(t, fields["signature"].(string))
			p.Payload, _ = json.Marshal(fields)
			vr, err := tc.f.Verify(t.Context(), p, tc.offer)
			if err != nil {
				t.Fatal(err)
			}
			if vr.IsValid || vr.InvalidReason != tc.want {
				t.Errorf("Verify of a signature with v %s = %+v, want reason %q", fields["signature"].(string)[130:], vr, tc.want)
			}
			if sr, err := tc.f.Settle(t.Context(), p, tc.offer); err != nil || sr.Success {
				t.Errorf("Settle of a signature with v %s = %+v, %v; want it refused", fields["signature"].(string)[130:], sr, err)
			}
		})
	}
}

// lowV writes a signature's v of 27 or 28 as 0 or 1.
func lowV(t *testing.T, sig string) string {
	t.Helper()
	switch v := sig[len(sig)-2:]; v {
	case "1b":
		return sig[:len(sig)-2] + "00"
	case "1c":
		return sig[:len(sig)-2] + "01"
	default:
		t.Fatalf("signature %s has v %s, want 1b or 1c", sig, v)
		return ""
	}
}

func otherByte(b string) string {
	if b == "00" {
		return "01"
	}
	return "00"
}
