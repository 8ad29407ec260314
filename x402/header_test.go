package x402_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/x402"
)

// Header values of the x402 HTTP transport specifications (version 2 and
// version 1), with the values they decode to.
const (
	specPaymentRequired = "eyJ4NDAyVmVyc2lvbiI6MiwiZXJyb3IiOiJQQVlNRU5ULVNJR05BVFVSRSBoZWFkZXIgaXMgcmVxdWlyZWQiLCJyZXNvdXJjZSI6eyJ1cmwiOiJodHRwczovL2FwaS5leGFtcGxlLmNvbS9wcmVtaXVtLWRhdGEiLCJkZXNjcmlwdGlvbiI6IkFjY2VzcyB0byBwcmVtaXVtIG1hcmtldCBkYXRhIiwibWltZVR5cGUiOiJhcHBsaWNhdGlvbi9qc29uIn0sImFjY2VwdHMiOlt7InNjaGVtZSI6ImV4YWN0IiwibmV0d29yayI6ImVpcDE1NTo4NDUzMiIsImFtb3VudCI6IjEwMDAwIiwiYXNzZXQiOiIweDAzNkNiRDUzODQyYzU0MjY2MzRlNzkyOTU0MWVDMjMxOGYzZENGN2UiLCJwYXlUbyI6IjB4MjA5NjkzQmM2YWZjMEM1MzI4YkEzNkZhRjAzQzUxNEVGMzEyMjg3QyIsIm1heFRpbWVvdXRTZWNvbmRzIjo2MCwiZXh0cmEiOnsibmFtZSI6IlVTREMiLCJ2ZXJzaW9uIjoiMiJ9fV19"
	specXPayment        = "eyJ4NDAyVmVyc2lvbiI6MSwic2NoZW1lIjoiZXhhY3QiLCJuZXR3b3JrIjoiYmFzZS1zZXBvbGlhIiwicGF5bG9hZCI6eyJzaWduYXR1cmUiOiIweDJkNmE3NTg4ZDZhY2NhNTA1Y2JmMGQ5YTRhMjI3ZTBjNTJjNmMzNDAwOGM4ZTg5ODZhMTI4MzI1OTc2NDE3MzYwOGEyY2U2NDk2NjQyZTM3N2Q2ZGE4ZGJiZjU4MzZlOWJkMTUwOTJmOWVjYWIwNWRlZDNkNjI5M2FmMTQ4YjU3MWMiLCJhdXRob3JpemF0aW9uIjp7ImZyb20iOiIweDg1N2IwNjUxOUU5MWUzQTU0NTM4NzkxYkRiYjBFMjIzNzNlMzZiNjYiLCJ0byI6IjB4MjA5NjkzQmM2YWZjMEM1MzI4YkEzNkZhRjAzQzUxNEVGMzEyMjg3QyIsInZhbHVlIjoiMTAwMDAiLCJ2YWxpZEFmdGVyIjoiMTc0MDY3MjA4OSIsInZhbGlkQmVmb3JlIjoiMTc0MDY3MjE1NCIsIm5vbmNlIjoiMHhmMzc0NjYxM2MyZDkyMGI1ZmRhYmMwODU2ZjJhZWIyZDRmODhlZTYwMzdiOGNjNWQwNGE3MWE0NDYyZjEzNDgwIn19fQ=="
	specPaymentResponse = "eyJzdWNjZXNzIjp0cnVlLCJ0cmFuc2FjdGlvbiI6IjB4MTIzNDU2Nzg5MGFiY2RlZjEyMzQ1Njc4OTBhYmNkZWYxMjM0NTY3ODkwYWJjZGVmMTIzNDU2Nzg5MGFiY2RlZiIsIm5ldHdvcmsiOiJlaXAxNTU6ODQ1MzIiLCJwYXllciI6IjB4ODU3YjA2NTE5RTkxZTNBNTQ1Mzg3OTFiRGJiMEUyMjM3M2UzNmI2NiJ9"
)

func TestDecodePaymentRequired_specExample(t *testing.T) {
	got, err := x402.DecodePaymentRequired(specPaymentRequired)
	if err != nil {
		t.Fatal(err)
	}
	want := &x402.PaymentRequired{
		X402Version: 2,
		Error:       "PAYMENT-SIGNATURE header is required",
		Resource:    &x402.ResourceInfo{URL: "https://api.example.com/premium-data", Description: "Access to premium market data", MimeType: "application/json"},
		Accepts: []x402.PaymentRequirements{{
			Scheme: "exact", Network: "eip155:84532", Amount: "10000",
			Asset: "0x036CbD53842c5426634e7929541eC2318f3dCF7e", PayTo: "0x209693Bc6afc0C5328bA36FaF03C514EF312287C",
			MaxTimeoutSeconds: 60, Extra: map[string]any{"name": "USDC", "version": "2"},
		}},
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("decoded terms (-want +got):\n%s", diff)
	}
}

func TestDecodePaymentPayload_specV1ExampleRoundTrips(t *testing.T) {
	p, err := x402.DecodePaymentPayload(specXPayment)
	if err != nil {
		t.Fatal(err)
	}
	if p.X402Version != 1 || p.Accepted.Scheme != "exact" || p.Accepted.Network != "base-sepolia" {
		t.Errorf("payload = %+v, want version 1, exact on base-sepolia", p)
	}
	again, err := x402.EncodeHeader(p)
	if err != nil {
		t.Fatal(err)
	}
	// The spec's value is compact JSON with members in the same order as
	// the version 1 shape, so encoding must give it back byte for byte.
	if again != specXPayment {
		t.Errorf("re-encoded = %s\nwant          %s", again, specXPayment)
	}
}

func TestDecodeSettleResponse_specExample(t *testing.T) {
	got, err := x402.DecodeSettleResponse(specPaymentResponse)
	if err != nil {
		t.Fatal(err)
	}
	want := &x402.SettleResponse{Success: true, Transaction: "0x1234567890abcdef1234567890abcdef1234567890abcdef1234567890abcdef", Network: "eip155:84532", Payer: "0x857b06519E91e3A54538791bDbb0E22373e36b66"}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("settlement (-want +got):\n%s", diff)
	}
}

func TestDecodeHeader_lenientBase64(t *testing.T) {
	for _, tc := range []struct {
		name, value string
		ok          bool
	}{
		{"padded", specXPayment, true},
		{"unpadded", strings.TrimRight(specXPayment, "="), true},
		{"surrounding spaces", " " + specXPayment + "\t", true},
		{"url alphabet", strings.NewReplacer("+", "-", "/", "_").Replace(specPaymentRequired) + "_-", false},
		{"empty", "", false},
		{"json not base64", `{"x402Version":1}`, false},
		{"too long", strings.Repeat("A", 70000), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := x402.DecodePaymentPayload(tc.value)
			if (err == nil) != tc.ok {
				t.Fatalf("err = %v, want ok = %v", err, tc.ok)
			}
			if err != nil && !errors.Is(err, x402.ErrInvalidHeader) {
				t.Errorf("err = %v, want it to wrap ErrInvalidHeader", err)
			}
		})
	}
}

func TestDecodePaymentPayload_invalidMembers(t *testing.T) {
	for _, tc := range []struct {
		name, json, field string
	}{
		{"version 3", `{"x402Version":3,"accepted":{"scheme":"exact","network":"eip155:1"},"payload":{}}`, "x402Version"},
		{"no accepted scheme", `{"x402Version":2,"accepted":{"network":"eip155:1"},"payload":{}}`, "accepted.scheme"},
		{"v1 no network", `{"x402Version":1,"scheme":"exact","payload":{}}`, "network"},
		{"payload not an object", `{"x402Version":1,"scheme":"exact","network":"base","payload":"0x"}`, "payload"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			v, _ := x402.EncodeHeader(json.RawMessage(tc.json))
			_, err := x402.DecodePaymentPayload(v)
			if !errors.Is(err, x402.ErrInvalidHeader) || !strings.Contains(err.Error(), tc.field) {
				t.Errorf("err = %v, want ErrInvalidHeader naming %q", err, tc.field)
			}
		})
	}
}
