package x402

import (
	"encoding/json"
	"strings"
	"testing"
	"time"
)

// The payload of a proof is outside input: the middleware reads its
// authorization for the replay key and the validity check.
func FuzzProofAuthorization(f *testing.F) {
	f.Add([]byte(`{"signature":"0x00","permit2Authorization":{"from":"0xAb","permitted":{"token":"0x1","amount":"5"},"spender":"0x2","nonce":"7","deadline":"1800000000","witness":{"to":"0x3","facilitator":"0x4","validAfter":"0"}}}`))
	f.Add([]byte(`{"signature":"0x00","authorization":{"from":"0xAb","to":"0xB","value":"1","validAfter":"0","validBefore":"99","nonce":"0x01"}}`))
	f.Fuzz(func(t *testing.T, payload []byte) {
		p := &PaymentPayload{X402Version: Version2, Accepted: PaymentRequirements{Scheme: SchemeUpto, Network: "eip155:84532"}, Payload: payload}
		offer := PaymentRequirements{Scheme: SchemeUpto, Network: "eip155:84532", Amount: "5", Asset: "0x1", PayTo: "0x3", MaxTimeoutSeconds: 60}
		now := time.Unix(1_700_000_000, 0)
		key, until := replayKey(p, offer, now)
		if until.Before(now.Add(time.Minute)) {
			t.Fatalf("a proof is held only until %v", until)
		}
		if _, _, text, ok := permit2Of(p); ok && authorizationOf(p) == nil {
			deadline, _ := unixSeconds(text)
			if !strings.HasPrefix(key, "permit2:") || until.Unix() < deadline {
				t.Fatalf("a Permit2 authorization keyed %q until %v, deadline %d", key, until, deadline)
			}
		}
		validBefore(p)
	})
}

// The usage of a payment response is outside input to the payer.
func FuzzUsageFromSettlement(f *testing.F) {
	f.Add([]byte(`{"info":{"amount":"2000","units":2,"unit":"run","maxAmount":"5000"}}`))
	f.Add([]byte(`{"info":{"amount":2000}}`))
	f.Fuzz(func(t *testing.T, ext []byte) {
		sr := &SettleResponse{Extensions: map[string]json.RawMessage{ExtensionUsage: ext}}
		u, ok := UsageFromSettlement(sr)
		if !ok {
			return
		}
		withUsage(sr, &u)
		if v, ok := UsageFromSettlement(sr); !ok || v != u {
			t.Fatalf("usage %+v does not survive a round trip: %+v, %v", u, v, ok)
		}
	})
}

// The escrow report of a payment response is outside input to the payer.
func FuzzEscrowFromSettlement(f *testing.F) {
	f.Add([]byte(`{"info":{"id":"0x01","state":"captured","verdict":"VALID","held":"5000","captured":"3000","holdTransaction":"0x02","captureDeadline":1800000600}}`))
	f.Add([]byte(`{"info":null}`))
	f.Fuzz(func(t *testing.T, ext []byte) {
		sr := &SettleResponse{Extensions: map[string]json.RawMessage{ExtensionEscrow: ext}}
		e, ok := EscrowFromSettlement(sr)
		if !ok {
			return
		}
		again, err := json.Marshal(map[string]EscrowReport{"info": e})
		if err != nil {
			t.Fatal(err)
		}
		sr.Extensions[ExtensionEscrow] = again
		if e2, ok := EscrowFromSettlement(sr); !ok || e2 != e {
			t.Fatalf("the report %+v does not read back: %+v", e, e2)
		}
	})
}

// The deadlines of an accepted auth-capture offer are outside input.
func FuzzEscrowTerms(f *testing.F) {
	f.Add([]byte(`{"captureDeadline":1700000600,"refundDeadline":1700087000,"name":"USDC"}`))
	f.Add([]byte(`{"captureDeadline":1.5e9,"refundDeadline":"x"}`))
	f.Fuzz(func(t *testing.T, extra []byte) {
		var accepted PaymentRequirements
		if json.Unmarshal(extra, &accepted.Extra) != nil {
			return
		}
		now := time.Unix(1_700_000_000, 0)
		pw := &paywall{cfg: MiddlewareConfig{Escrow: &EscrowConfig{}, SettleTimeout: DefaultSettleTimeout}}
		offer := PaymentRequirements{Scheme: SchemeAuthCapture, Extra: map[string]any{"name": "USDC"}}
		got, reason := escrowTerms(pw.cfg.Escrow, pw.cfg.SettleTimeout, offer, accepted, Price{}, now)
		if reason != "" {
			return
		}
		cd, _ := got.Extra["captureDeadline"].(int64)
		if cd < now.Unix() || cd > now.Add(DefaultCaptureWindow+time.Minute).Unix() {
			t.Fatalf("capture deadline %d taken at %d", cd, now.Unix())
		}
		escrowCandidates([]PaymentRequirements{offer}, accepted)
	})
}
