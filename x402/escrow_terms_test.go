package x402_test

import (
	"maps"
	"strings"
	"testing"
	"time"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// A capture deadline is exclusive, as the escrow takes it: a payment
// whose capture deadline is the very second the work and its two
// settlements may end, or before, could not be captured then, and is
// refused; one a second later is accepted.
func TestEscrowTerms_captureDeadlineAfterTheWork(t *testing.T) {
	authorizer, err := evm.ParsePrivateKey("0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba")
	if err != nil {
		t.Fatal(err)
	}
	e, err := x402.NewEscrow(x402.EscrowConfig{Authorizer: evm.ReceiverAuthorizer{Key: authorizer}}, &evm.Escrow{}, 15*time.Second, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	operator, _ := evm.ParseAddress(evm.OfflineFacilitatorAddress)
	offer, err := evm.AuthCaptureUSDC("eip155:84532", payTo, "$0.05", operator, authorizer.Address())
	if err != nil {
		t.Fatal(err)
	}
	price := x402.Price{Accepts: []x402.PaymentRequirements{offer}, TimeBudget: 30 * time.Second}
	now := time.Unix(1_800_000_000, 500_000_000)
	end := now.Add(30*time.Second + 2*15*time.Second) // 1_800_000_060.5
	accepted := func(cd int64) x402.PaymentRequirements {
		o := offer
		o.Extra = maps.Clone(offer.Extra)
		o.Extra["captureDeadline"] = float64(cd)
		o.Extra["refundDeadline"] = float64(cd + int64(x402.DefaultRefundWindow/time.Second))
		return o
	}
	for _, tc := range []struct {
		cd   int64
		want bool
	}{
		{end.Unix() - 1, false},
		{end.Unix(), false}, // before the work may end
		{end.Unix() + 1, true},
	} {
		_, reason := e.Terms(offer, accepted(tc.cd), price, now)
		if got := reason == ""; got != tc.want {
			t.Errorf("captureDeadline %d, the work ending at %s: accepted %v (%q), want %v", tc.cd, end.Format("15:04:05.0"), got, reason, tc.want)
		}
		if !tc.want && !strings.HasPrefix(reason, "invalid_auth_capture_deadline") {
			t.Errorf("captureDeadline %d: reason %q", tc.cd, reason)
		}
	}
}
