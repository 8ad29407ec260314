package x402_test

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// silentPayer is the offline facilitator with the payer left out of its
// verify and settle answers, as some facilitators answer.
type silentPayer struct{ *evm.Facilitator }

func (f silentPayer) Verify(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.VerifyResponse, error) {
	vr, err := f.Facilitator.Verify(ctx, p, r)
	if vr != nil {
		vr.Payer = ""
	}
	return vr, err
}

func (f silentPayer) Settle(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.SettleResponse, error) {
	sr, err := f.Facilitator.Settle(ctx, p, r)
	if sr != nil {
		sr.Payer = ""
	}
	return sr, err
}

// TestMiddleware_payerFromTheAuthorization: when the facilitator's
// answers leave the payer out, the handler still learns who paid: the
// from of the payment's authorization, which the valid verification
// proves signed it, so that the handlers that name callers by their
// payer do not take every such payer for one payer "", nor for their
// client address.
func TestMiddleware_payerFromTheAuthorization(t *testing.T) {
	u := newPaidServer(t, serverOptions{facilitator: silentPayer{&evm.Facilitator{}}}, echo).URL
	p := proof(t, 2, nil)
	decoded, err := x402.DecodePaymentPayload(p)
	if err != nil {
		t.Fatal(err)
	}
	var ep evm.ExactPayload
	if err := json.Unmarshal(decoded.Payload, &ep); err != nil || ep.Authorization.From == "" {
		t.Fatalf("payload %s names no payer (%v)", decoded.Payload, err)
	}
	resp := send(t, u, x402.HeaderPaymentSignature, p)
	body, _ := io.ReadAll(resp.Body)
	if want := "x paid by " + ep.Authorization.From; resp.StatusCode != http.StatusOK || !strings.EqualFold(string(body), want) {
		t.Errorf("%d %q, want 200 %q", resp.StatusCode, body, want)
	}
	sr, err := x402.SettlementFromResponse(resp)
	if err != nil || !strings.EqualFold(sr.Payer, ep.Authorization.From) {
		t.Errorf("settlement %+v (%v), want its payer %s", sr, err, ep.Authorization.From)
	}
}

// TestPaymentPayload_AuthorizationFrom: the signer of an EIP-3009 or a
// Permit2 authorization, in lower case however it is spelt, and none for
// a payload that names neither.
func TestPaymentPayload_AuthorizationFrom(t *testing.T) {
	for _, tc := range []struct {
		payload string
		want    string
		ok      bool
	}{
		{`{"signature":"0x1","authorization":{"from":"0xAbC","to":"0xdef"}}`, "0xabc", true},
		{`{"signature":"0x1","authorization":{"from":"0xABC","to":"0xdef"}}`, "0xabc", true},
		{`{"signature":"0x1","permit2Authorization":{"from":"0x123","spender":"0x9"}}`, "0x123", true},
		{`{"signature":"0x1","authorization":{"to":"0xdef"}}`, "", false},
		{`{"transaction":"AQID"}`, "", false},
		{`[1,2]`, "", false},
	} {
		p := &x402.PaymentPayload{X402Version: 2, Payload: json.RawMessage(tc.payload)}
		if got, ok := p.AuthorizationFrom(); got != tc.want || ok != tc.ok {
			t.Errorf("AuthorizationFrom of %s = %q, %v; want %q, %v", tc.payload, got, ok, tc.want, tc.ok)
		}
	}
	var none *x402.PaymentPayload
	if got, ok := none.AuthorizationFrom(); got != "" || ok {
		t.Errorf("AuthorizationFrom of nil = %q, %v; want none", got, ok)
	}
}
