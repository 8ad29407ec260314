package evm_test

import (
	"encoding/hex"
	"encoding/json"
	"math/big"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// A Permit2 "upto" authorization signed by testKey with viem's
// signTypedData and the @x402/evm package's uptoPermit2WitnessTypes: the
// digest and the signature are theirs.
var (
	katUpto = evm.Permit2Authorization{
		From:      "0x2c7536E3605D9C16a7a3D7b1898e529396a65c23",
		Permitted: evm.TokenPermissions{Token: "0x036CbD53842c5426634e7929541eC2318f3dCF7e", Amount: "5000000"},
		Spender:   evm.UptoProxyAddress,
		Nonce:     "110173934830813416893432197413349290449398440393442598009986318519325094507648",
		Deadline:  "1740672154",
		Witness: evm.UptoWitness{
			To:          "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
			Facilitator: "0x857b06519E91e3A54538791bDbb0E22373e36b66",
			ValidAfter:  "1740672089",
		},
	}
	katUptoDigest    = "ca9b28b9ef179ad3c844a1ca6844a511b22a07e49233f23184fff41a811de551"
	katUptoSignature = "0x8c3fcc62ee8e6178be077f32bd8b010b2abd357cc535c93c6cc44cd7df4f389704e1c00c4779a5b14634a357beade98595e1091acce158d15945e712834a084f1c"
)

func TestUptoDigest_knownAnswer(t *testing.T) {
	d, err := evm.UptoDigest(84532, katUpto)
	if err != nil {
		t.Fatal(err)
	}
	if got := hex.EncodeToString(d[:]); got != katUptoDigest {
		t.Errorf("digest = %s, want %s", got, katUptoDigest)
	}
	k, _ := evm.ParsePrivateKey(testKey)
	if got := "0x" + hex.EncodeToString(k.Sign(d)); got != katUptoSignature {
		t.Errorf("signature = %s, want %s", got, katUptoSignature)
	}
	a, err := evm.RecoverHex(d, katUptoSignature)
	if err != nil || a.String() != katUpto.From {
		t.Errorf("recovered %s, %v; want %s", a, err, katUpto.From)
	}
	other := katUpto
	other.Permitted.Amount = "5000001"
	if d2, _ := evm.UptoDigest(84532, other); d2 == d {
		t.Error("the digest does not cover the permitted amount")
	}
	if d3, _ := evm.UptoDigest(8453, katUpto); d3 == d {
		t.Error("the digest does not cover the chain id")
	}
	for _, bad := range []func(a *evm.Permit2Authorization){
		func(a *evm.Permit2Authorization) { a.Nonce = "0x01" },
		func(a *evm.Permit2Authorization) { a.Witness.Facilitator = "facilitator" },
		func(a *evm.Permit2Authorization) { a.Deadline = "-1" },
	} {
		a := katUpto
		bad(&a)
		if _, err := evm.UptoDigest(84532, a); err == nil {
			t.Errorf("UptoDigest(%+v) succeeded", a)
		}
	}
}

const testFacilitator = "0x857b06519E91e3A54538791bDbb0E22373e36b66"

func uptoOffer(t *testing.T) x402.PaymentRequirements {
	t.Helper()
	o, err := evm.UptoUSDC("eip155:84532", "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", "$0.005", testFacilitator)
	if err != nil {
		t.Fatal(err)
	}
	return o
}

func uptoFacilitator(now time.Time) *evm.Facilitator {
	a, _ := evm.ParseAddress(testFacilitator)
	return &evm.Facilitator{Now: func() time.Time { return now }, Address: a}
}

func TestPayer_upto(t *testing.T) {
	o := uptoOffer(t)
	p := signed(t, o, 2)
	var up evm.UptoPayload
	if err := json.Unmarshal(p.Payload, &up); err != nil {
		t.Fatal(err)
	}
	a := up.Permit2Authorization
	if a.Permitted.Amount != "5000" || a.Spender != evm.UptoProxyAddress || a.Witness.Facilitator != testFacilitator || a.Witness.To != o.PayTo {
		t.Errorf("authorization = %+v", a)
	}
	if a.Deadline != "1800000060" || a.Witness.ValidAfter != "1799999400" {
		t.Errorf("window = %s..%s, want 1799999400..1800000060", a.Witness.ValidAfter, a.Deadline)
	}
	if n, ok := new(big.Int).SetString(a.Nonce, 10); !ok || n.Sign() <= 0 {
		t.Errorf("nonce %q is not a positive decimal", a.Nonce)
	}
	payer, _ := evm.NewPayer(testKey)
	noFac := o
	noFac.Extra = map[string]any{"name": "USDC", "version": "2"}
	if payer.Supports(noFac) {
		t.Error("Supports an upto offer without extra.facilitatorAddress")
	}
	if _, err := payer.Pay(t.Context(), noFac); err == nil {
		t.Error("Pay signed an upto offer without extra.facilitatorAddress")
	}
	if !payer.Supports(o) {
		t.Error("does not support the upto offer")
	}
}

func TestFacilitator_uptoVerify(t *testing.T) {
	at := t0.Add(time.Second)
	for _, tc := range []struct {
		name  string
		f     *evm.Facilitator
		offer func(o *x402.PaymentRequirements)
		auth  func(a *evm.Permit2Authorization)
		want  string
	}{
		{"valid", uptoFacilitator(at), nil, nil, ""},
		{"offer maximum differs", uptoFacilitator(at), func(o *x402.PaymentRequirements) { o.Amount = "4000" }, nil, evm.ReasonPermit2Amount},
		{"other facilitator", &evm.Facilitator{Now: func() time.Time { return at }}, nil, nil, evm.ReasonUptoFacilitator},
		{"other payTo", uptoFacilitator(at), func(o *x402.PaymentRequirements) { o.PayTo = testFacilitator }, nil, evm.ReasonPermit2Recipient},
		{"expired", uptoFacilitator(t0.Add(61 * time.Second)), nil, nil, evm.ReasonPermit2Deadline},
		{"not yet valid", uptoFacilitator(t0.Add(-11 * time.Minute)), nil, nil, evm.ReasonPermit2NotYetValid},
		{"amount raised", uptoFacilitator(at), func(o *x402.PaymentRequirements) { o.Amount = "6000" }, func(a *evm.Permit2Authorization) { a.Permitted.Amount = "6000" }, evm.ReasonPermit2Signature},
		{"spender changed", uptoFacilitator(at), nil, func(a *evm.Permit2Authorization) { a.Spender = testFacilitator }, evm.ReasonPermit2Spender},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := uptoOffer(t)
			p := signed(t, o, 2)
			if tc.auth != nil {
				var up evm.UptoPayload
				json.Unmarshal(p.Payload, &up)
				tc.auth(&up.Permit2Authorization)
				p.Payload, _ = json.Marshal(up)
			}
			if tc.offer != nil {
				tc.offer(&o)
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

func TestFacilitator_uptoSettlesTheAmountUsed(t *testing.T) {
	f := uptoFacilitator(t0.Add(time.Second))
	o := uptoOffer(t)
	p := signed(t, o, 2)
	if vr, _ := f.Verify(t.Context(), p, o); !vr.IsValid {
		t.Fatalf("Verify = %+v", vr)
	}
	above := o
	above.Amount = "5001"
	sr, err := f.Settle(t.Context(), p, above)
	if err != nil || sr.Success || sr.ErrorReason != evm.ReasonUptoExceedsAmount {
		t.Fatalf("Settle above the maximum = %+v, %v; want %s", sr, err, evm.ReasonUptoExceedsAmount)
	}
	used := o
	used.Amount = "2000"
	sr, err = f.Settle(t.Context(), p, used)
	if err != nil || !sr.Success || sr.Amount != "2000" || sr.Transaction == "" {
		t.Fatalf("Settle = %+v, %v", sr, err)
	}
	again, _ := f.Settle(t.Context(), p, used)
	if again.Success || again.ErrorReason != evm.ReasonPermit2Nonce {
		t.Errorf("second Settle = %+v, want %s", again, evm.ReasonPermit2Nonce)
	}
	if vr, _ := f.Verify(t.Context(), p, o); vr.IsValid || vr.InvalidReason != evm.ReasonPermit2Nonce {
		t.Errorf("Verify after settling = %+v", vr)
	}
	got := f.Settlements()
	want := []evm.Settlement{{Scheme: x402.SchemeUpto, Transaction: sr.Transaction, Network: o.Network, Asset: o.Asset, Payer: sr.Payer, Amount: "2000"}}
	if diff := cmp.Diff(want, got, cmp.FilterPath(func(p cmp.Path) bool {
		n := p.Last().String()
		return n == ".Permit2" || n == ".At"
	}, cmp.Ignore())); diff != "" {
		t.Errorf("settlements (-want +got):\n%s", diff)
	}
	if got[0].Permit2 == nil || got[0].Permit2.Permitted.Amount != "5000" {
		t.Errorf("settled authorization = %+v", got[0].Permit2)
	}
}

func TestFacilitator_uptoZeroMovesNothing(t *testing.T) {
	f := uptoFacilitator(t0.Add(time.Second))
	o := uptoOffer(t)
	p := signed(t, o, 2)
	zero := o
	zero.Amount = "0"
	sr, err := f.Settle(t.Context(), p, zero)
	if err != nil || !sr.Success || sr.Amount != "0" || sr.Transaction != "" {
		t.Fatalf("Settle(0) = %+v, %v", sr, err)
	}
	if again, _ := f.Settle(t.Context(), p, o); again.Success {
		t.Errorf("an authorization settled for zero settled again: %+v", again)
	}
}

func TestFacilitator_supportedUpto(t *testing.T) {
	f := uptoFacilitator(t0)
	a, err := x402.FacilitatorAddress(t.Context(), f, "base-sepolia")
	if err != nil || a != testFacilitator {
		t.Errorf("FacilitatorAddress = %q, %v; want %s", a, err, testFacilitator)
	}
	a, err = x402.FacilitatorAddress(t.Context(), &evm.Facilitator{}, "eip155:84532")
	if err != nil || a != evm.OfflineFacilitatorAddress {
		t.Errorf("zero Facilitator's address = %q, %v; want %s", a, err, evm.OfflineFacilitatorAddress)
	}
	if _, err := x402.FacilitatorAddress(t.Context(), f, "eip155:8453"); err == nil {
		t.Error("an address on a network the facilitator does not accept")
	}
}

func FuzzFacilitatorUpto(f *testing.F) {
	seed, _ := json.Marshal(evm.UptoPayload{Signature: katUptoSignature, Permit2Authorization: katUpto})
	f.Add(seed, "2000")
	f.Add([]byte(`{"permit2Authorization":{"permitted":{}}}`), "-1")
	f.Fuzz(func(t *testing.T, payload []byte, amount string) {
		fac := &evm.Facilitator{Now: func() time.Time { return time.Unix(1740672100, 0) }}
		o, _ := evm.UptoUSDC("base-sepolia", "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", "$5", evm.OfflineFacilitatorAddress)
		p := &x402.PaymentPayload{X402Version: 2, Accepted: o, Payload: payload}
		vr, err := fac.Verify(t.Context(), p, o)
		if err != nil || vr == nil || vr.IsValid {
			t.Fatalf("Verify = %+v, %v; want a refusal", vr, err) // no random payload names this facilitator with a valid signature
		}
		o.Amount = amount
		sr, err := fac.Settle(t.Context(), p, o)
		if err != nil || sr == nil || sr.Success {
			t.Fatalf("Settle = %+v, %v; want a refusal", sr, err)
		}
	})
}
