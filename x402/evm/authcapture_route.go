package evm

import (
	"encoding/json"
	"fmt"
	"math/big"
	"time"

	"github.com/vouchkit/vouch/x402"
)

// AuthCaptureUSDC returns an "auth-capture" offer of price, in dollars, paid
// in USDC on network to payTo, in the escrow flow with the "delegated"
// operator operator (the facilitator's address: an [Escrow]'s Operator)
// and receiverAuthorizer, the address of the server's
// [ReceiverAuthorizer]. Its capture and refund deadlines are left zero:
// [x402.Middleware] sets them on each request (see
// [x402.EscrowConfig]). Fees are zero, to no fee recipient.
func AuthCaptureUSDC(network, payTo, price string, operator, receiverAuthorizer Address) (x402.PaymentRequirements, error) {
	o, err := USDC(network, payTo, price)
	if err != nil {
		return o, err
	}
	o.Scheme = x402.SchemeAuthCapture
	o.Extra = AuthCaptureExtra{
		Name: o.Extra["name"].(string), Version: o.Extra["version"].(string),
		CaptureAuthorizer: operator.String(), OperatorType: OperatorDelegated, ReceiverAuthorizer: receiverAuthorizer.String(),
		PaymentFlow: PaymentFlowEscrow, FeeRecipient: Address{}.String(),
	}.Map()
	return o, nil
}

// ReceiverAuthorizer is the server's half of "auth-capture" payments on EVM
// networks, for [x402.Middleware] ([x402.EscrowAuthorizer]): it reads the
// hold a payer's payload asks for, and signs the server's consent to each
// lifecycle operation with Key, the key of the offers'
// extra.receiverAuthorizer. It is safe for concurrent use.
type ReceiverAuthorizer struct {
	// Key signs the consents. Required.
	Key *PrivateKey
}

// hold returns the terms of offer and the hold the payload asks for,
// without checking any time (the facilitator does).
func (a ReceiverAuthorizer) hold(offer x402.PaymentRequirements, payload json.RawMessage) (AuthCaptureTerms, AuthCaptureHold, error) {
	t, err := ParseAuthCaptureOffer(offer)
	if err != nil {
		return t, AuthCaptureHold{}, err
	}
	if a.Key == nil || t.ReceiverAuthorizer != a.Key.Address() {
		return t, AuthCaptureHold{}, fmt.Errorf("evm: the offer's receiver authorizer %s is not this server's key", t.ReceiverAuthorizer)
	}
	p, err := DecodeAuthCapturePayload(payload)
	if err != nil {
		return t, AuthCaptureHold{}, err
	}
	h, err := t.verify(p, nil)
	return t, h, err
}

// Hold implements [x402.EscrowAuthorizer]: the payment's id is its hash in
// the escrow.
func (a ReceiverAuthorizer) Hold(offer x402.PaymentRequirements, payload json.RawMessage) (x402.EscrowPayment, error) {
	t, h, err := a.hold(offer, payload)
	if err != nil {
		return x402.EscrowPayment{}, err
	}
	return x402.EscrowPayment{
		ID: hex32(h.Hash), Offer: offer, Payload: payload, Payer: h.Payer.String(), Amount: t.MaxAmount.String(),
		CaptureDeadline: time.Unix(int64(t.Extra.CaptureDeadline), 0).UTC(),
		RefundDeadline:  time.Unix(int64(t.Extra.RefundDeadline), 0).UTC(),
	}, nil
}

// Transient implements [x402.EscrowTransient]: a lifecycle operation
// refused for want of a balance (the operator's, which funds refunds, or
// the escrow's) may succeed once the balance comes.
func (ReceiverAuthorizer) Transient(reason string) bool {
	return reason == ReasonAuthCaptureInsufficientBal || reason == ReasonAuthCaptureRefundFunding
}

// Consent implements [x402.EscrowAuthorizer]: a capture of less than the
// hold voids the rest in the same settle; capture and refund consents
// expect the escrow balances p records.
func (a ReceiverAuthorizer) Consent(p x402.EscrowPayment, operation, amount string) (*x402.PaymentPayload, error) {
	t, h, err := a.hold(p.Offer, p.Payload)
	if err != nil {
		return nil, err
	}
	num := func(s string) *big.Int {
		n, ok := new(big.Int).SetString(s, 10)
		if !ok {
			n = new(big.Int)
		}
		return n
	}
	hold, captured, refunded := num(p.Amount), num(p.Captured), num(p.Refunded)
	var l AuthCaptureLifecycle
	switch operation {
	case OperationCapture:
		n := num(amount)
		l, err = t.SignCapture(a.Key, h.PaymentInfo, h.Payload.SaltNonce, n, hold, new(big.Int), n.Cmp(hold) < 0)
	case OperationVoid:
		l, err = t.SignVoid(a.Key, h.PaymentInfo, h.Payload.SaltNonce)
	case OperationRefund:
		l, err = t.SignRefund(a.Key, h.PaymentInfo, h.Payload.SaltNonce, num(amount), new(big.Int), new(big.Int).Sub(captured, refunded))
	default:
		return nil, fmt.Errorf("evm: unknown auth-capture operation %q", operation)
	}
	if err != nil {
		return nil, err
	}
	return l.Payment(p.Offer)
}

var _ x402.EscrowAuthorizer = ReceiverAuthorizer{}
