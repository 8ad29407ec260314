package trustmcp_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// A payment whose nonce is another payment's with the suffix under which
// the Paywall keeps that payment's result while it settles
// ("#settling") names no payment of its own: it is verified, refused as
// the facilitator refuses it (invalid_payload), and refused so again
// when sent again. Before, its key was taken for the other payment's
// kept result: it was refused as already used, unverified, and its
// reservation was never released. The payment it mimics is untouched:
// its retry settles it.
func TestPaywall_craftedSettlingKeyIsInvalid(t *testing.T) {
	exact, _ := settlingOffers(t)
	fac := newFaultySettle(1, false)
	r := newSettlingRig(t, fac, nil)
	p, _ := signedPayment(t, exact)
	wantSettlementFailed(t, r.call(t, "square", p), "unexpected_settle_error")

	var payload map[string]json.RawMessage
	var auth map[string]any
	if err := json.Unmarshal(p.Payload, &payload); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(payload["authorization"], &auth); err != nil {
		t.Fatal(err)
	}
	auth["nonce"] = auth["nonce"].(string) + "#settling"
	payload["authorization"], _ = json.Marshal(auth)
	crafted := p
	crafted.Payload, _ = json.Marshal(payload)
	var refusals []string
	for range 2 {
		reason, _, _ := strings.Cut(paidTerms(t, r.call(t, "square", crafted)).Error, ":")
		refusals = append(refusals, reason)
	}
	if diff := cmp.Diff([]string{"invalid_payload", "invalid_payload"}, refusals); diff != "" {
		t.Errorf("the crafted payment sent twice: refusals (-want +got):\n%s", diff)
	}
	got := answer(t, r.call(t, "square", p))
	want := `{"run":1,"square":9}`
	if diff := cmp.Diff([]any{want, 1}, []any{got.Structured, len(fac.Settlements())}); diff != "" {
		t.Errorf("the retry of the payment mimicked: result, settlements (-want +got):\n%s", diff)
	}
}
