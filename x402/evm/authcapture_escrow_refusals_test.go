package evm_test

import (
	"fmt"
	"math/big"
	"testing"
	"time"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// Amounts, fees, deadlines, consents and funding the escrow refuses.
func TestEscrowRefusals(t *testing.T) {
	feeTo := mustParse("0x00000000000000000000000000000000000fee01")
	fees := func(r *x402.PaymentRequirements) {
		r.Extra["feeRecipient"], r.Extra["minFeeBps"], r.Extra["maxFeeBps"] = feeTo.String(), 100, 200
	}
	editCapture := func(b *escrowBed, amount int64, edit func(l *evm.AuthCaptureLifecycle)) *x402.PaymentPayload {
		c, r := b.state()
		l, err := b.terms.SignCapture(b.authorizer, b.hold.PaymentInfo, b.hold.Payload.SaltNonce, big.NewInt(amount), c, r, false)
		if err != nil {
			t.Fatal(err)
		}
		edit(&l)
		hash, _ := l.PaymentInfo.Hash(b.terms.ChainID, b.terms.Deployment.Escrow)
		d, err := b.terms.CaptureDigest(hash, l.Amount, l.FeeAmount, l.FeeReceiver, l.ExpectedCapturableAmount, l.ExpectedRefundableAmount)
		if err != nil {
			t.Fatal(err)
		}
		l.AuthorizerSignature = fmt.Sprintf("0x%x", b.authorizer.Sign(d))
		return b.wrap(l)
	}
	// editAuthorize is the payer's authorization, edited and signed again,
	// as a payer that chose those fields would sign it.
	editAuthorize := func(b *escrowBed, edit func(p *evm.AuthCapturePayload)) *x402.PaymentPayload {
		p, err := evm.SignAuthCapture(b.payer, b.terms, b.now, [32]byte{7})
		if err != nil {
			t.Fatal(err)
		}
		edit(&p)
		if err := evm.ResignAuthCapture(b.payer, b.terms, &p); err != nil {
			t.Fatal(err)
		}
		return b.wrap(p)
	}
	for _, c := range []struct {
		name   string
		offer  func(r *x402.PaymentRequirements)
		run    func(b *escrowBed) *x402.SettleResponse
		reason string
		broke  string // "operator": it has no funds; "payer": it has half the hold
	}{
		{"capture above the hold", nil, func(b *escrowBed) *x402.SettleResponse {
			b.must(b.settle(b.authorize))
			return b.settle(b.capture(1_000_001, false))
		}, evm.ReasonAuthCaptureInsufficientAuth, ""},
		{"refund above the captured", nil, func(b *escrowBed) *x402.SettleResponse {
			b.must(b.settle(b.authorize))
			b.must(b.settle(b.capture(500_000, false)))
			return b.settle(b.refund(500_001))
		}, evm.ReasonAuthCaptureRefundExceeds, ""},
		{"refund without the operator's funds", nil, func(b *escrowBed) *x402.SettleResponse {
			b.must(b.settle(b.authorize))
			b.must(b.settle(b.capture(500_000, false)))
			return b.settle(b.refund(100))
		}, evm.ReasonAuthCaptureRefundFunding, "operator"},
		{"fee below the floor", fees, func(b *escrowBed) *x402.SettleResponse {
			b.must(b.settle(b.authorize))
			return b.settle(editCapture(b, 10_000, func(l *evm.AuthCaptureLifecycle) { l.FeeAmount = "99" }))
		}, evm.ReasonAuthCaptureFeeOutOfRange, ""},
		{"fee above the ceiling", fees, func(b *escrowBed) *x402.SettleResponse {
			b.must(b.settle(b.authorize))
			return b.settle(editCapture(b, 10_000, func(l *evm.AuthCaptureLifecycle) { l.FeeAmount = "201" }))
		}, evm.ReasonAuthCaptureFeeOutOfRange, ""},
		{"fee at the ceiling", fees, func(b *escrowBed) *x402.SettleResponse {
			b.must(b.settle(b.authorize))
			return b.settle(editCapture(b, 10_000, func(l *evm.AuthCaptureLifecycle) { l.FeeAmount = "200" }))
		}, "", ""},
		{"fee to another receiver", fees, func(b *escrowBed) *x402.SettleResponse {
			b.must(b.settle(b.authorize))
			return b.settle(editCapture(b, 10_000, func(l *evm.AuthCaptureLifecycle) { l.FeeReceiver = acReceiver }))
		}, evm.ReasonAuthCaptureFeeReceiver, ""},
		{"fee to nobody", nil, func(b *escrowBed) *x402.SettleResponse {
			b.must(b.settle(b.authorize))
			return b.settle(editCapture(b, 10_000, func(l *evm.AuthCaptureLifecycle) { l.FeeAmount = "1" }))
		}, evm.ReasonAuthCaptureFeeOutOfRange, ""},
		{"stale consent", nil, func(b *escrowBed) *x402.SettleResponse {
			b.must(b.settle(b.authorize))
			stale := b.capture(100_000, false)
			b.must(b.settle(b.capture(200_000, false)))
			return b.settle(stale)
		}, evm.ReasonAuthCaptureUnexpectedState, ""},
		{"capture of the whole hold with a void", nil, func(b *escrowBed) *x402.SettleResponse {
			b.must(b.settle(b.authorize))
			return b.settle(b.capture(1_000_000, true))
		}, evm.ReasonAuthCaptureVoidFullCapture, ""},
		{"consent by another", nil, func(b *escrowBed) *x402.SettleResponse {
			b.must(b.settle(b.authorize))
			b.authorizer = acKey(t, acOtherKey)
			return b.settle(b.void())
		}, evm.ReasonAuthCaptureAuthorizerSig, ""},
		{"payer without the balance", nil, func(b *escrowBed) *x402.SettleResponse {
			return b.settle(b.authorize)
		}, evm.ReasonAuthCaptureInsufficientBal, "payer"},
		{"operator not this escrow's", func(r *x402.PaymentRequirements) { r.Extra["captureAuthorizer"] = acReceiver }, func(b *escrowBed) *x402.SettleResponse {
			return b.settle(b.authorize)
		}, evm.ReasonAuthCaptureNotAdmitted, ""},
		{"custom operator", func(r *x402.PaymentRequirements) {
			r.Extra["operatorType"], r.Extra["captureMode"] = "custom", "deferred"
		}, func(b *escrowBed) *x402.SettleResponse {
			return b.settle(b.authorize)
		}, evm.ReasonAuthCaptureOperatorType, ""},
		{"authorization flow", func(r *x402.PaymentRequirements) {
			r.Extra["paymentFlow"] = "authorization"
			delete(r.Extra, "captureMode")
		}, func(b *escrowBed) *x402.SettleResponse {
			return b.settle(b.authorize)
		}, evm.ReasonAuthCapturePaymentFlow, ""},
		{"lifecycle without a receiver authorizer", func(r *x402.PaymentRequirements) { r.Extra["captureMode"] = "deferred" }, func(b *escrowBed) *x402.SettleResponse {
			b.must(b.settle(b.authorize))
			b.offer.Extra["receiverAuthorizer"] = evm.Address{}.String()
			return b.settle(b.void())
		}, evm.ReasonAuthCaptureLifecycleNotRelay, ""},
		{"authorization valid from other than 0", nil, func(b *escrowBed) *x402.SettleResponse {
			// The collector redeems it with validAfter 0, which the
			// payer did not sign: the token would refuse the signature.
			return b.settle(editAuthorize(b, func(p *evm.AuthCapturePayload) { p.Authorization.ValidAfter = "1" }))
		}, evm.ReasonAuthCaptureSignature, ""},
		{"signature with v 0 or 1", nil, func(b *escrowBed) *x402.SettleResponse {
			// The token's ECRecover reverts on it (and Permit2's
			// ecrecover recovers no signer): the hold would never collect.
			p, err := evm.SignAuthCapture(b.payer, b.terms, b.now, [32]byte{7})
			if err != nil {
				t.Fatal(err)
			}
			p.Signature = lowV(t, p.Signature)
			return b.settle(b.wrap(p))
		}, evm.ReasonAuthCaptureSignature, ""},
		{"authorization expired", nil, func(b *escrowBed) *x402.SettleResponse {
			b.now = b.now.Add(time.Minute)
			return b.settle(b.authorize)
		}, evm.ReasonAuthCaptureExpired, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			b := newEscrowBed(t, c.offer)
			switch c.broke {
			case "payer":
				b.escrow.Fund(acToken, b.payer.Address(), big.NewInt(-4_500_000))
			case "":
				b.escrow.Fund(acToken, b.terms.Operator, big.NewInt(1_000_000))
			}
			before := b.total()
			sr := c.run(b)
			if sr.ErrorReason != c.reason {
				t.Fatalf("reason %q (%s), want %q", sr.ErrorReason, sr.ErrorMessage, c.reason)
			}
			if after := b.total(); after != before {
				t.Fatalf("the parties held %d, now %d", before, after)
			}
		})
	}
}
