package evm_test

import (
	"encoding/hex"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// resigned returns a version 2 proof for o whose authorization change
// altered, signed again by the test key, so that only the change is
// wrong, if anything is.
func resigned(t *testing.T, o x402.PaymentRequirements, change func(a *evm.Authorization)) *x402.PaymentPayload {
	t.Helper()
	p := signed(t, o, 2)
	var ep evm.ExactPayload
	if err := json.Unmarshal(p.Payload, &ep); err != nil {
		t.Fatal(err)
	}
	change(&ep.Authorization)
	key, err := evm.ParsePrivateKey(testKey)
	if err != nil {
		t.Fatal(err)
	}
	d := evm.Domain{Name: o.ExtraString("name"), Version: o.ExtraString("version"), ChainID: 84532, VerifyingContract: o.Asset}
	if digest, err := evm.TransferDigest(d, ep.Authorization); err == nil {
		ep.Signature = "0x" + hex.EncodeToString(key.Sign(digest))
	}
	p.Payload, _ = json.Marshal(ep)
	return p
}

// TestFacilitator_VerifyValidityWindow: the token contract takes
// validAfter and validBefore as uint256, so a validBefore far beyond what
// 64 bits hold is not expired, and a time that is no uint256 is refused
// as such, not as expired.
func TestFacilitator_VerifyValidityWindow(t *testing.T) {
	f := &evm.Facilitator{Now: func() time.Time { return t0.Add(time.Second) }}
	o := usdcOffer(t)
	type verdict struct {
		Valid           bool
		Reason, Message string
	}
	for _, tc := range []struct {
		name   string
		change func(a *evm.Authorization)
		want   verdict
	}{
		{"validBefore 10^40-1", func(a *evm.Authorization) { a.ValidBefore = strings.Repeat("9", 40) }, verdict{Valid: true}},
		{"validBefore 2^256-1", func(a *evm.Authorization) {
			a.ValidBefore = "115792089237316195423570985008687907853269984665640564039457584007913129639935"
		}, verdict{Valid: true}},
		{"validBefore 2^256", func(a *evm.Authorization) {
			a.ValidBefore = "115792089237316195423570985008687907853269984665640564039457584007913129639936"
		}, verdict{false, evm.ReasonValidBefore, "authorization.validBefore: a number of 78 digits is out of the range of a uint256 (below 2^256, 78 digits at most)"}},
		{"validBefore not a number", func(a *evm.Authorization) { a.ValidBefore = "tomorrow" }, verdict{false, evm.ReasonValidBefore, `authorization.validBefore: "tomorrow" is not a decimal uint256`}},
		{"validBefore negative", func(a *evm.Authorization) { a.ValidBefore = "-1" }, verdict{false, evm.ReasonValidBefore, `authorization.validBefore: "-1" is not a decimal uint256`}},
		{"validAfter not a number", func(a *evm.Authorization) { a.ValidAfter = "0x10" }, verdict{false, evm.ReasonValidAfter, `authorization.validAfter: "0x10" is not a decimal uint256`}},
		{"validAfter 10^40-1", func(a *evm.Authorization) { a.ValidAfter = strings.Repeat("9", 40) }, verdict{false, evm.ReasonValidAfter, "the authorization is valid only after " + strings.Repeat("9", 40)}},
		{"expired", func(a *evm.Authorization) { a.ValidBefore = "1800000001" }, verdict{false, evm.ReasonValidBefore, "the authorization expired at 1800000001"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			vr, err := f.Verify(t.Context(), resigned(t, o, tc.change), o)
			if err != nil {
				t.Fatal(err)
			}
			got := verdict{vr.IsValid, vr.InvalidReason, vr.InvalidMessage}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Verify (-want +got):\n%s", diff)
			}
		})
	}
}
