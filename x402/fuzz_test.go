package x402

import (
	"bytes"
	"encoding/base64"
	"testing"
)

// The decoders of outside input must never panic, and what they accept must
// encode again.

func FuzzDecodePaymentRequired(f *testing.F) {
	f.Add(base64.StdEncoding.EncodeToString([]byte(`{"x402Version":2,"accepts":[{"scheme":"exact","network":"eip155:84532","amount":"1000","asset":"0xA","payTo":"0xB","maxTimeoutSeconds":60}]}`)))
	f.Fuzz(func(t *testing.T, s string) {
		pr, err := DecodePaymentRequired(s)
		if err != nil {
			return
		}
		if _, err := EncodeHeader(pr); err != nil {
			t.Fatalf("accepted terms do not encode: %v", err)
		}
	})
}

func FuzzDecodePaymentPayload(f *testing.F) {
	f.Add(base64.StdEncoding.EncodeToString([]byte(`{"x402Version":1,"scheme":"exact","network":"base-sepolia","payload":{"signature":"0x"}}`)))
	f.Fuzz(func(t *testing.T, s string) {
		p, err := DecodePaymentPayload(s)
		if err != nil {
			return
		}
		v, err := EncodeHeader(p)
		if err != nil {
			t.Fatalf("accepted payload does not encode: %v", err)
		}
		q, err := DecodePaymentPayload(v)
		if err != nil || q.X402Version != p.X402Version || q.Accepted.Scheme != p.Accepted.Scheme || q.Accepted.Network != p.Accepted.Network {
			t.Fatalf("re-decoded %+v, %v; want %+v", q, err, p)
		}
	})
}

func FuzzDecodeSettleResponse(f *testing.F) {
	f.Add(base64.StdEncoding.EncodeToString([]byte(`{"success":true,"transaction":"0x12","network":"eip155:84532"}`)))
	f.Fuzz(func(t *testing.T, s string) {
		if sr, err := DecodeSettleResponse(s); err == nil {
			if _, err := EncodeHeader(sr); err != nil {
				t.Fatal(err)
			}
		}
	})
}

func FuzzParseTermsBody(f *testing.F) {
	f.Add([]byte(`{"x402Version":1,"error":"","accepts":[{"scheme":"exact","network":"base-sepolia","maxAmountRequired":"10","asset":"0xA","payTo":"0xB","resource":"http://x/","description":"","maxTimeoutSeconds":60}]}`))
	f.Fuzz(func(t *testing.T, body []byte) {
		pr, err := parseTermsBody(bytes.Clone(body))
		if err == nil && pr.X402Version != Version1 && pr.X402Version != Version2 {
			t.Fatalf("accepted terms of version %d", pr.X402Version)
		}
	})
}
