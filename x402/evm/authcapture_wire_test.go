package evm_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

const (
	acPayer    = "0x2c7536E3605D9C16a7a3D7b1898e529396a65c23"
	acReceiver = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C"
	acUSDC     = "0x036CbD53842c5426634e7929541eC2318f3dCF7e"
	acOperator = "0x0000000000000000000000000000000000FaC402"
	acAuthz    = "0x8d9e4a7b1c2f3e4d5a6b7c8d9e0f1a2b3c4d5e6f"
	acWord     = "0x00000000000000000000000000000000000000000000000000000000000000ab"
)

// acOffer is an "auth-capture" offer relayed by a delegated operator with
// a receiver authorizer, captured by the request's own settle.
func acOffer() x402.PaymentRequirements {
	return x402.PaymentRequirements{
		Scheme: x402.SchemeAuthCapture, Network: "eip155:84532", Amount: "1000000", Asset: acUSDC, PayTo: acReceiver, MaxTimeoutSeconds: 60,
		Extra: evm.AuthCaptureExtra{
			Name: "USDC", Version: "2", CaptureAuthorizer: acOperator, ReceiverAuthorizer: acAuthz,
			CaptureDeadline: 1_800_003_600, RefundDeadline: 1_800_604_800, FeeRecipient: evm.Address{}.String(),
		}.Map(),
	}
}

func TestParseAuthCaptureOffer(t *testing.T) {
	terms, err := evm.ParseAuthCaptureOffer(acOffer())
	if err != nil {
		t.Fatal(err)
	}
	want := evm.AuthCaptureExtra{
		Name: "USDC", Version: "2", CaptureAuthorizer: acOperator, OperatorType: evm.OperatorDelegated, ReceiverAuthorizer: acAuthz,
		PaymentFlow: evm.PaymentFlowEscrow, CaptureMode: evm.CaptureSync, CaptureDeadline: 1_800_003_600, RefundDeadline: 1_800_604_800,
		FeeRecipient: evm.Address{}.String(), AssetTransferMethod: evm.TransferEIP3009,
	}
	if diff := cmp.Diff(want, terms.Extra); diff != "" {
		t.Errorf("defaults (-want +got):\n%s", diff)
	}
	if terms.Deployment != evm.EscrowV1_1() || !terms.Bound() || !terms.Relayed() || terms.ChainID != 84532 {
		t.Errorf("terms %+v: want the v1.1 deployment, bound, relayed, chain 84532", terms)
	}
}

func TestParseAuthCaptureOfferRefused(t *testing.T) {
	for _, c := range []struct {
		name  string
		edit  func(r *x402.PaymentRequirements)
		field string // what the error must name
	}{
		{"scheme", func(r *x402.PaymentRequirements) { r.Scheme = "exact" }, `"exact"`},
		{"network", func(r *x402.PaymentRequirements) { r.Network = "solana:x" }, "solana:x"},
		{"amount zero", func(r *x402.PaymentRequirements) { r.Amount = "0" }, "amount"},
		{"amount above uint120", func(r *x402.PaymentRequirements) { r.Amount = "1329227995784915872903807060280344576" }, "uint120"},
		{"no timeout", func(r *x402.PaymentRequirements) { r.MaxTimeoutSeconds = 0 }, "maxTimeoutSeconds"},
		{"no extra", func(r *x402.PaymentRequirements) { r.Extra = nil }, "extra"},
		{"no name", func(r *x402.PaymentRequirements) { delete(r.Extra, "name") }, "extra.name"},
		{"deadline as string", func(r *x402.PaymentRequirements) { r.Extra["captureDeadline"] = "1800003600" }, "extra.captureDeadline"},
		{"deadline fraction", func(r *x402.PaymentRequirements) { r.Extra["captureDeadline"] = 1.5 }, "extra.captureDeadline"},
		{"deadline above uint48", func(r *x402.PaymentRequirements) { r.Extra["captureDeadline"] = float64(1 << 50) }, "extra.captureDeadline"},
		{"no capture deadline", func(r *x402.PaymentRequirements) { delete(r.Extra, "captureDeadline") }, "extra.captureDeadline"},
		{"refund before capture", func(r *x402.PaymentRequirements) { r.Extra["refundDeadline"] = 1_800_000_000 }, "extra.refundDeadline"},
		{"no operator", func(r *x402.PaymentRequirements) { delete(r.Extra, "captureAuthorizer") }, "extra.captureAuthorizer"},
		{"zero operator", func(r *x402.PaymentRequirements) { r.Extra["captureAuthorizer"] = evm.Address{}.String() }, "extra.captureAuthorizer"},
		{"bad receiver authorizer", func(r *x402.PaymentRequirements) { r.Extra["receiverAuthorizer"] = "0x12" }, "extra.receiverAuthorizer"},
		{"no fee recipient", func(r *x402.PaymentRequirements) { delete(r.Extra, "feeRecipient") }, "extra.feeRecipient"},
		{"fee above 10000", func(r *x402.PaymentRequirements) { r.Extra["maxFeeBps"] = 10001 }, "extra.maxFeeBps"},
		{"fee bounds crossed", func(r *x402.PaymentRequirements) { r.Extra["minFeeBps"], r.Extra["maxFeeBps"] = 20, 10 }, "extra.minFeeBps"},
		{"fee to nobody", func(r *x402.PaymentRequirements) { r.Extra["maxFeeBps"] = 10 }, "extra.feeRecipient"},
		{"unknown escrow", func(r *x402.PaymentRequirements) { r.Extra["authCaptureEscrow"] = acReceiver }, "extra.authCaptureEscrow"},
		{"unknown flow", func(r *x402.PaymentRequirements) { r.Extra["paymentFlow"] = "later" }, "extra.paymentFlow"},
		{"policy operator", func(r *x402.PaymentRequirements) { r.Extra["operatorType"] = "policy" }, "extra.operatorType"},
		{"non-zero policy", func(r *x402.PaymentRequirements) { r.Extra["policy"] = acReceiver }, "extra.policy"},
		{"unknown method", func(r *x402.PaymentRequirements) { r.Extra["assetTransferMethod"] = "permit" }, "extra.assetTransferMethod"},
		{"sync without authorizer", func(r *x402.PaymentRequirements) { delete(r.Extra, "receiverAuthorizer") }, "extra.captureMode"},
		{"capture mode on a charge", func(r *x402.PaymentRequirements) {
			r.Extra["paymentFlow"], r.Extra["captureMode"] = "authorization", "sync"
		}, "extra.captureMode"},
	} {
		t.Run(c.name, func(t *testing.T) {
			r := acOffer()
			c.edit(&r)
			_, err := evm.ParseAuthCaptureOffer(r)
			if err == nil || !strings.Contains(err.Error(), c.field) {
				t.Fatalf("error %v, want one naming %s", err, c.field)
			}
		})
	}
}

// Members of extra the scheme does not define are ignored, as it asks of
// clients; the deferred capture mode and the v1.0 escrow are taken.
func TestParseAuthCaptureOfferAccepted(t *testing.T) {
	r := acOffer()
	r.Extra["futureMember"] = map[string]any{"x": 1}
	r.Extra["authCaptureEscrow"] = evm.EscrowV1_0().Escrow.String()
	delete(r.Extra, "receiverAuthorizer")
	r.Extra["captureMode"] = "deferred"
	terms, err := evm.ParseAuthCaptureOffer(r)
	if err != nil {
		t.Fatal(err)
	}
	if terms.Deployment != evm.EscrowV1_0() || terms.Bound() || terms.Relayed() {
		t.Fatalf("terms %+v: want the v1.0 deployment, unbound, not relayed", terms)
	}
}

func acCollect() map[string]any {
	return map[string]any{
		"authorization": map[string]any{
			"from": acPayer, "to": evm.EscrowV1_1().EIP3009Collector.String(), "value": "1000000",
			"validAfter": "0", "validBefore": "1800000060", "nonce": acWord,
		},
		"signature": "0x" + strings.Repeat("11", 65),
		"salt":      acWord,
		"saltNonce": acWord,
	}
}

func acPermit2() map[string]any {
	p := acCollect()
	delete(p, "authorization")
	p["permit2Authorization"] = map[string]any{
		"from": acPayer, "permitted": map[string]any{"token": acUSDC, "amount": "1000000"},
		"spender": evm.EscrowV1_1().Permit2Collector.String(), "nonce": "171", "deadline": "1800000060",
	}
	return p
}

func jsonOf(t testing.TB, v any) []byte {
	t.Helper()
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestDecodeAuthCapturePayload(t *testing.T) {
	for _, c := range []struct {
		name    string
		payload func() map[string]any
		edit    func(p map[string]any)
		field   string // "" when the payload is good
	}{
		{"eip3009", acCollect, func(map[string]any) {}, ""},
		{"permit2", acPermit2, func(map[string]any) {}, ""},
		{"unbound", acCollect, func(p map[string]any) { delete(p, "saltNonce") }, ""},
		{"neither", acCollect, func(p map[string]any) { delete(p, "authorization") }, "neither authorization nor permit2Authorization"},
		{"both", acPermit2, func(p map[string]any) { p["authorization"] = acCollect()["authorization"] }, "both"},
		{"unknown member", acCollect, func(p map[string]any) { p["amount"] = "5" }, `"amount"`},
		{"unknown nested member", acCollect, func(p map[string]any) { p["authorization"].(map[string]any)["witness"] = 1 }, `"witness"`},
		{"no signature", acCollect, func(p map[string]any) { delete(p, "signature") }, "payload.signature"},
		{"no salt", acCollect, func(p map[string]any) { delete(p, "salt") }, "payload.salt"},
		{"short salt", acCollect, func(p map[string]any) { p["salt"] = "0xab" }, "payload.salt"},
		{"bad saltNonce", acCollect, func(p map[string]any) { p["saltNonce"] = "ab" }, "payload.saltNonce"},
		{"bad from", acCollect, func(p map[string]any) { p["authorization"].(map[string]any)["from"] = "0x1" }, "payload.authorization.from"},
		{"value as number", acCollect, func(p map[string]any) { p["authorization"].(map[string]any)["value"] = 5 }, "payload.authorization.value"},
		{"negative value", acCollect, func(p map[string]any) { p["authorization"].(map[string]any)["value"] = "-5" }, "payload.authorization.value"},
		{"short nonce", acCollect, func(p map[string]any) { p["authorization"].(map[string]any)["nonce"] = "0x01" }, "payload.authorization.nonce"},
		{"bad spender", acPermit2, func(p map[string]any) { p["permit2Authorization"].(map[string]any)["spender"] = "" }, "payload.permit2Authorization.spender"},
		{"bad permit2 nonce", acPermit2, func(p map[string]any) { p["permit2Authorization"].(map[string]any)["nonce"] = "0xab" }, "payload.permit2Authorization.nonce"},
		{"bad token", acPermit2, func(p map[string]any) {
			p["permit2Authorization"].(map[string]any)["permitted"].(map[string]any)["token"] = "usdc"
		}, "payload.permit2Authorization.permitted.token"},
		{"lifecycle", acCollect, func(p map[string]any) { p["type"] = "capture" }, `"type"`},
	} {
		t.Run(c.name, func(t *testing.T) {
			p := c.payload()
			c.edit(p)
			got, err := evm.DecodeAuthCapturePayload(jsonOf(t, p))
			switch {
			case c.field == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.field == "":
				if diff := cmp.Diff(p, mapOf(t, got)); diff != "" {
					t.Errorf("decoded payload does not encode back (-sent +decoded):\n%s", diff)
				}
			case err == nil || !strings.Contains(err.Error(), c.field):
				t.Fatalf("error %v, want one naming %s", err, c.field)
			}
		})
	}
	if _, err := evm.DecodeAuthCapturePayload([]byte(`{"salt":"x"} {}`)); err == nil {
		t.Error("data after the payload object is accepted")
	}
}

func mapOf(t *testing.T, v any) map[string]any {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(jsonOf(t, v), &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func acLifecycle(typ string) map[string]any {
	l := map[string]any{
		"type": typ,
		"paymentInfo": map[string]any{
			"operator": acOperator, "payer": acPayer, "receiver": acReceiver, "token": acUSDC, "maxAmount": "1000000",
			"preApprovalExpiry": 1_800_000_060, "authorizationExpiry": 1_800_003_600, "refundExpiry": 1_800_604_800,
			"minFeeBps": 0, "maxFeeBps": 0, "feeReceiver": evm.Address{}.String(), "salt": acWord,
		},
		"saltNonce":           acWord,
		"authorizerSignature": "0x" + strings.Repeat("22", 65),
	}
	switch typ {
	case "capture":
		l["amount"], l["feeAmount"], l["feeReceiver"] = "750000", "0", acReceiver
		l["expectedCapturableAmount"], l["expectedRefundableAmount"] = "1000000", "0"
	case "refund":
		l["amount"], l["expectedCapturableAmount"], l["expectedRefundableAmount"] = "250000", "0", "750000"
	}
	return l
}

func TestDecodeAuthCaptureLifecycle(t *testing.T) {
	for _, c := range []struct {
		name  string
		typ   string
		edit  func(l map[string]any)
		field string
	}{
		{"capture", "capture", func(map[string]any) {}, ""},
		{"capture and void", "capture", func(l map[string]any) { l["voidAuthorizerSignature"] = "0x33" }, ""},
		{"void", "void", func(map[string]any) {}, ""},
		{"refund", "refund", func(map[string]any) {}, ""},
		{"unknown type", "reclaim", func(map[string]any) {}, "payload.type"},
		{"capture without amount", "capture", func(l map[string]any) { delete(l, "amount") }, "payload.amount"},
		{"capture without expectations", "capture", func(l map[string]any) { delete(l, "expectedRefundableAmount") }, "payload.expectedRefundableAmount"},
		{"void with amount", "void", func(l map[string]any) { l["amount"] = "1" }, "payload.amount"},
		{"refund with void signature", "refund", func(l map[string]any) { l["voidAuthorizerSignature"] = "0x33" }, "payload.voidAuthorizerSignature"},
		{"refund with fee", "refund", func(l map[string]any) { l["feeAmount"] = "1" }, "payload.feeAmount"},
		{"no authorizer signature", "void", func(l map[string]any) { delete(l, "authorizerSignature") }, "payload.authorizerSignature"},
		{"no saltNonce", "void", func(l map[string]any) { delete(l, "saltNonce") }, "payload.saltNonce"},
		{"bad payer", "void", func(l map[string]any) { l["paymentInfo"].(map[string]any)["payer"] = "0x0" }, "payload.paymentInfo.payer"},
		{"expiry above uint48", "void", func(l map[string]any) { l["paymentInfo"].(map[string]any)["refundExpiry"] = float64(1 << 49) }, "payload.paymentInfo.refundExpiry"},
		{"expiry as string", "void", func(l map[string]any) { l["paymentInfo"].(map[string]any)["refundExpiry"] = "1" }, "payload.paymentInfo.refundExpiry"},
		{"fee bps above 10000", "void", func(l map[string]any) { l["paymentInfo"].(map[string]any)["maxFeeBps"] = 10001 }, "payload.paymentInfo"},
		{"unknown member", "void", func(l map[string]any) { l["note"] = "x" }, `"note"`},
		{"bad amount", "refund", func(l map[string]any) { l["amount"] = "1e3" }, "payload.amount"},
	} {
		t.Run(c.name, func(t *testing.T) {
			l := acLifecycle(c.typ)
			c.edit(l)
			_, err := evm.DecodeAuthCaptureLifecycle(jsonOf(t, l))
			switch {
			case c.field == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case c.field != "" && (err == nil || !strings.Contains(err.Error(), c.field)):
				t.Fatalf("error %v, want one naming %s", err, c.field)
			}
		})
	}
}

func TestAuthCaptureOperation(t *testing.T) {
	for _, c := range []struct {
		payload string
		want    string
		bad     bool
	}{
		{`{"authorization":{}}`, "", false},
		{`{"type":"capture"}`, "capture", false},
		{`{"type":""}`, "", true},
		{`{"type":5}`, "", true},
		{`[]`, "", true},
	} {
		got, err := evm.AuthCaptureOperation([]byte(c.payload))
		if got != c.want || (err != nil) != c.bad {
			t.Errorf("AuthCaptureOperation(%s) = %q, %v; want %q, error %v", c.payload, got, err, c.want, c.bad)
		}
	}
}

// Payloads of outside input: decoding never panics, and what decodes
// encodes back to a payload that decodes the same.
func FuzzDecodeAuthCapturePayload(f *testing.F) {
	f.Add(jsonOf(f, acCollect()))
	f.Add(jsonOf(f, acPermit2()))
	f.Add(jsonOf(f, acLifecycle("capture")))
	f.Add(jsonOf(f, acLifecycle("refund")))
	f.Fuzz(func(t *testing.T, data []byte) {
		op, err := evm.AuthCaptureOperation(data)
		if err != nil {
			return
		}
		if op == "" {
			p, err := evm.DecodeAuthCapturePayload(data)
			if err != nil {
				return
			}
			again, err := evm.DecodeAuthCapturePayload(jsonOf(t, p))
			if err != nil || !cmp.Equal(p, again) {
				t.Fatalf("%+v does not survive a round trip: %+v, %v", p, again, err)
			}
			return
		}
		l, err := evm.DecodeAuthCaptureLifecycle(data)
		if err != nil {
			return
		}
		again, err := evm.DecodeAuthCaptureLifecycle(jsonOf(t, l))
		if err != nil || !cmp.Equal(l, again) {
			t.Fatalf("%+v does not survive a round trip: %+v, %v", l, again, err)
		}
	})
}
