package x402_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/x402"
)

// proofRecorder records the payment proofs its requests carry.
type proofRecorder struct {
	base   http.RoundTripper
	proofs []string
}

func (pr *proofRecorder) RoundTrip(req *http.Request) (*http.Response, error) {
	if v := req.Header.Get(x402.HeaderPaymentSignature); v != "" {
		pr.proofs = append(pr.proofs, v)
	}
	return pr.base.RoundTrip(req)
}

// TestGate_refusalIsTheRequestsOwn: the refusal of alice's answer, kept
// with her proof, goes again to her retry, but not to another request
// sending her payer and nonce with another signature, which is refused as
// a used payment without learning what the gate said of her answer.
func TestGate_refusalIsTheRequestsOwn(t *testing.T) {
	gs := newGatedServer(t)
	rec := &proofRecorder{base: http.DefaultTransport}
	alice := &http.Client{Transport: &x402.Transport{Payer: newPayer(t), Base: rec}}
	if resp, body := gs.post(t, alice, "bad"); resp.StatusCode != http.StatusBadGateway || body != "refused: bad" {
		t.Fatalf("alice's call: %d %q, want 502 and her refusal", resp.StatusCode, body)
	}
	if len(rec.proofs) != 1 {
		t.Fatalf("alice sent %d proofs, want 1", len(rec.proofs))
	}
	p, err := x402.DecodePaymentPayload(rec.proofs[0])
	if err != nil {
		t.Fatal(err)
	}
	var payload map[string]json.RawMessage
	if err := json.Unmarshal(p.Payload, &payload); err != nil {
		t.Fatal(err)
	}
	payload["signature"] = json.RawMessage(`"0x` + strings.Repeat("11", 65) + `"`)
	p.Payload, _ = json.Marshal(payload)
	forged, err := x402.EncodeHeader(p)
	if err != nil {
		t.Fatal(err)
	}
	for _, key := range []string{"call-1", "call-2"} {
		req, _ := http.NewRequest(http.MethodPost, gs.URL+"/gated", strings.NewReader("bad"))
		req.Header.Set(x402.HeaderIdempotencyKey, key)
		req.Header.Set(x402.HeaderPaymentSignature, forged)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusPaymentRequired {
			t.Errorf("another signature on alice's authorization, key %s: %d, want 402 (already used), not her refusal", key, resp.StatusCode)
		}
	}
	if resp, body := gs.post(t, alice, "bad"); resp.StatusCode != http.StatusBadGateway || body != "refused: bad" {
		t.Errorf("alice's retry: %d %q, want 502 and her refusal again", resp.StatusCode, body)
	}
	if r, c := gs.runs.Load(), gs.checks.Load(); r != 1 || c != 1 {
		t.Errorf("handler ran %d times, checked %d times; want once each", r, c)
	}
}
