package x402_test

import (
	"encoding/base64"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// TestMiddleware_validBeforeBeyondInt64: a validBefore beyond what 64
// bits hold (the token contracts take any uint256) is an authorization
// valid for too long, refused as such before the facilitator is asked,
// and not one that "expired".
func TestMiddleware_validBeforeBeyondInt64(t *testing.T) {
	var runs int
	ps := newPaidServer(t, serverOptions{}, func(w http.ResponseWriter, r *http.Request) { runs++ })
	huge := strings.Repeat("9", 40)
	v := proof(t, 2, func(_ *x402.PaymentPayload, ep *evm.ExactPayload) { ep.Authorization.ValidBefore = huge })

	raw, _ := base64.StdEncoding.DecodeString(v)
	var p x402.PaymentPayload
	if err := json.Unmarshal(raw, &p); err != nil {
		t.Fatal(err)
	}
	if vb, ok := p.AuthorizationValidBefore(); !ok || !vb.After(time.Date(9999, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("AuthorizationValidBefore = %v, %v; want a time after any a server compares it with", vb, ok)
	}

	resp := send(t, ps.URL, x402.HeaderPaymentSignature, v)
	got := reason(t, resp)
	want := "authorization_validity_too_long: the authorization may stay valid for at most 1h0m0s: validBefore " + huge + " is after "
	if resp.StatusCode != http.StatusPaymentRequired || !strings.HasPrefix(got, want) {
		t.Errorf("%d %q, want 402 starting %q", resp.StatusCode, got, want)
	}
	if runs != 0 || len(ps.fac.Settlements()) != 0 {
		t.Errorf("the handler ran %d times and %d settled, want none", runs, len(ps.fac.Settlements()))
	}
}
