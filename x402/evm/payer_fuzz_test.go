package evm_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// FuzzPayerOffer has the Payer read any offer, as a server it calls may
// send: it never panics, never pays an offer it says it cannot pay
// (Supports), never signs an authorization valid for longer than the
// offer's timeout, and what it signs is what the offer asks: the
// facilitator (on the offer's network, and for "upto" the one the offer
// names) or the auth-capture terms verify it, refusing at most for the
// clock. Auth-capture terms with their defaults written out parse to the
// same terms.
func FuzzPayerOffer(f *testing.F) {
	usdc := `{"name":"USDC","version":"2"}`
	f.Add(uint8(0), "eip155:84532", "1000", acUSDC, acReceiver, 60, []byte(usdc))
	f.Add(uint8(0), "base-sepolia", "5", acUSDC, acReceiver, 0, []byte(`{"name":"USD Coin","version":"2","x":[1]}`))
	f.Add(uint8(1), "eip155:84532", "5000", acUSDC, acReceiver, 300, []byte(`{"facilitatorAddress":"`+evm.OfflineFacilitatorAddress+`"}`))
	f.Add(uint8(2), "eip155:84532", "1000000", acUSDC, acReceiver, 60, jsonOf(f, acOffer().Extra))
	permit2 := acOffer().Extra
	permit2["assetTransferMethod"], permit2["receiverAuthorizer"], permit2["captureMode"] = evm.TransferPermit2, "", evm.CaptureDeferred
	f.Add(uint8(2), "eip155:84532", "7", acUSDC, acReceiver, 3600, jsonOf(f, permit2))
	key, err := evm.ParsePrivateKey(testKey)
	if err != nil {
		f.Fatal(err)
	}
	now := time.Unix(1_800_000_000, 0)
	schemes := []string{x402.SchemeExact, x402.SchemeUpto, x402.SchemeAuthCapture}
	f.Fuzz(func(t *testing.T, scheme uint8, network, amount, asset, payTo string, timeout int, extra []byte) {
		offer := x402.PaymentRequirements{
			Scheme: schemes[int(scheme)%len(schemes)], Network: network, Amount: amount, Asset: asset, PayTo: payTo, MaxTimeoutSeconds: timeout,
		}
		if json.Unmarshal(extra, &offer.Extra) != nil {
			offer.Extra = nil
		}
		p := &evm.Payer{Key: key, Now: func() time.Time { return now }, Rand: bytes.NewReader(bytes.Repeat([]byte{7}, 64)), MaxHold: 1 << 62}
		supports := p.Supports(offer)
		proof, err := p.Pay(context.Background(), offer)
		if err != nil {
			return
		}
		if !supports {
			t.Fatalf("paid %+v, an offer Supports refuses", offer)
		}
		limit := int64(evm.DefaultTimeout / time.Second)
		if timeout > 0 {
			limit = int64(timeout)
		}
		pp := &x402.PaymentPayload{X402Version: x402.Version2, Accepted: offer, Payload: proof.Payload}
		fac := &evm.Facilitator{Now: func() time.Time { return now }, Networks: []string{network}}
		var expiry string
		switch offer.Scheme {
		case x402.SchemeExact:
			var ep evm.ExactPayload
			if err := json.Unmarshal(proof.Payload, &ep); err != nil {
				t.Fatal(err)
			}
			expiry = ep.Authorization.ValidBefore
			verified(t, fac, pp, offer, evm.ReasonValidBefore)
		case x402.SchemeUpto:
			var up evm.UptoPayload
			if err := json.Unmarshal(proof.Payload, &up); err != nil {
				t.Fatal(err)
			}
			expiry = up.Permit2Authorization.Deadline
			fac.Address, _ = evm.ParseAddress(offer.ExtraString(evm.ExtraFacilitatorAddress))
			verified(t, fac, pp, offer, evm.ReasonPermit2Deadline)
		default:
			terms, err := evm.ParseAuthCaptureOffer(offer)
			if err != nil {
				t.Fatalf("paid the auth-capture offer %+v, which does not parse: %v", offer, err)
			}
			written := offer
			written.Extra = terms.Extra.Map()
			again, err := evm.ParseAuthCaptureOffer(written)
			if err != nil || again.MaxAmount.Cmp(terms.MaxAmount) != 0 || again.Extra != terms.Extra || again.Deployment != terms.Deployment ||
				again.Operator != terms.Operator || again.ReceiverAuthorizer != terms.ReceiverAuthorizer || again.FeeRecipient != terms.FeeRecipient {
				t.Fatalf("terms %+v, with their defaults written out, parse as %+v, %v", terms, again, err)
			}
			pl, err := evm.DecodeAuthCapturePayload(proof.Payload)
			if err != nil {
				t.Fatalf("the payer's payload %s does not decode: %v", proof.Payload, err)
			}
			if pl.Authorization != nil {
				expiry = pl.Authorization.ValidBefore
			} else {
				expiry = pl.Permit2Authorization.Deadline
			}
			var ae *evm.AuthCaptureError
			if _, err := terms.Verify(pl, now); err != nil && (!errors.As(err, &ae) || !slices.Contains([]string{
				evm.ReasonAuthCaptureCaptureExpired, evm.ReasonAuthCaptureDeadlineOrdering, evm.ReasonAuthCaptureExpired,
			}, ae.Reason)) {
				t.Fatalf("the terms refuse what the payer signed for %+v: %v", offer, err)
			}
		}
		if e, err := strconv.ParseInt(expiry, 10, 64); err != nil || e-now.Unix() > limit {
			t.Fatalf("an authorization valid until %s, %d s from now, for an offer of %d s", expiry, e-now.Unix(), timeout)
		}
	})
}

// verified fails unless fac verifies p for offer, or refuses it for the
// reason clock (the authorization has expired).
func verified(t *testing.T, fac *evm.Facilitator, p *x402.PaymentPayload, offer x402.PaymentRequirements, clock string) {
	t.Helper()
	vr, err := fac.Verify(context.Background(), p, offer)
	if err != nil || !vr.IsValid && vr.InvalidReason != clock {
		t.Fatalf("the payer's proof for %+v is refused: %+v, %v", offer, vr, err)
	}
}
