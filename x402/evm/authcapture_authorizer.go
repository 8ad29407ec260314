package evm

import (
	"errors"
	"fmt"
	"math/big"
)

// CaptureFee returns the fee the escrow takes by default from a capture of
// amount: amount*minFeeBps/10000, the escrow's integer division.
func (t AuthCaptureTerms) CaptureFee(amount *big.Int) *big.Int {
	return bps(amount, t.Extra.MinFeeBps)
}

func bps(amount *big.Int, b uint16) *big.Int {
	f := new(big.Int).Mul(amount, big.NewInt(int64(b)))
	return f.Quo(f, big.NewInt(10000))
}

// SignCapture makes the lifecycle payload that captures amount of the
// payment info (whose salt commitment saltNonce opens), signed by key as
// the receiver authorizer: the fee is [AuthCaptureTerms.CaptureFee] to the
// terms' fee recipient, and capturable and refundable are the escrow
// balances the consent expects, which make it single-use. With
// voidRest, the same settle voids what remains of the hold.
func (t AuthCaptureTerms) SignCapture(key *PrivateKey, info PaymentInfo, saltNonce string, amount, capturable, refundable *big.Int, voidRest bool) (AuthCaptureLifecycle, error) {
	hash, err := info.Hash(t.ChainID, t.Deployment.Escrow)
	if err != nil {
		return AuthCaptureLifecycle{}, err
	}
	if amount == nil || capturable == nil || refundable == nil {
		return AuthCaptureLifecycle{}, errors.New("evm: SignCapture needs amount, capturable and refundable")
	}
	l := AuthCaptureLifecycle{
		Type: OperationCapture, PaymentInfo: info, SaltNonce: saltNonce,
		Amount: amount.String(), FeeAmount: t.CaptureFee(amount).String(), FeeReceiver: t.FeeRecipient.String(),
		ExpectedCapturableAmount: capturable.String(), ExpectedRefundableAmount: refundable.String(),
	}
	digest, err := t.CaptureDigest(hash, l.Amount, l.FeeAmount, l.FeeReceiver, l.ExpectedCapturableAmount, l.ExpectedRefundableAmount)
	if err != nil {
		return AuthCaptureLifecycle{}, err
	}
	l.AuthorizerSignature = hexSig(key.Sign(digest))
	if voidRest {
		v := t.VoidDigest(hash)
		l.VoidAuthorizerSignature = hexSig(key.Sign(v))
	}
	return l, nil
}

// SignVoid makes the lifecycle payload that voids the hold of the
// payment info, signed by key as the receiver authorizer.
func (t AuthCaptureTerms) SignVoid(key *PrivateKey, info PaymentInfo, saltNonce string) (AuthCaptureLifecycle, error) {
	hash, err := info.Hash(t.ChainID, t.Deployment.Escrow)
	if err != nil {
		return AuthCaptureLifecycle{}, err
	}
	return AuthCaptureLifecycle{Type: OperationVoid, PaymentInfo: info, SaltNonce: saltNonce, AuthorizerSignature: hexSig(key.Sign(t.VoidDigest(hash)))}, nil
}

// SignRefund makes the lifecycle payload that refunds amount of what was
// captured of the payment info to its payer, signed by key as the
// receiver authorizer, expecting the escrow balances capturable and
// refundable.
func (t AuthCaptureTerms) SignRefund(key *PrivateKey, info PaymentInfo, saltNonce string, amount, capturable, refundable *big.Int) (AuthCaptureLifecycle, error) {
	hash, err := info.Hash(t.ChainID, t.Deployment.Escrow)
	if err != nil {
		return AuthCaptureLifecycle{}, err
	}
	if amount == nil || capturable == nil || refundable == nil {
		return AuthCaptureLifecycle{}, errors.New("evm: SignRefund needs amount, capturable and refundable")
	}
	l := AuthCaptureLifecycle{
		Type: OperationRefund, PaymentInfo: info, SaltNonce: saltNonce, Amount: amount.String(),
		ExpectedCapturableAmount: capturable.String(), ExpectedRefundableAmount: refundable.String(),
	}
	digest, err := t.RefundDigest(hash, l.Amount, l.ExpectedCapturableAmount, l.ExpectedRefundableAmount)
	if err != nil {
		return AuthCaptureLifecycle{}, err
	}
	l.AuthorizerSignature = hexSig(key.Sign(digest))
	return l, nil
}

// CheckLifecycle checks a lifecycle payload against the terms, as the
// binding's facilitator does before it reads the escrow's state: the
// lifecycle is relayed for these terms (a "delegated" operator with a
// receiver authorizer), capture and void only in the escrow flow; the
// payment's operator is the terms' capture authorizer; its salt is the
// commitment of saltNonce to the receiver authorizer and policy; every
// other field is what the terms dictate (the payer and the
// preApprovalExpiry excepted, which the payer chose); and the
// authorizer's signature (and a void signature on a capture) recovers to
// the receiver authorizer. It returns the payment's hash in the escrow.
// A refusal is an *[AuthCaptureError].
func (t AuthCaptureTerms) CheckLifecycle(l AuthCaptureLifecycle) ([32]byte, error) {
	if err := l.check(); err != nil {
		return [32]byte{}, refuse(ReasonAuthCapturePayloadFormat, "%v", err)
	}
	if !t.Relayed() {
		return [32]byte{}, refuse(ReasonAuthCaptureLifecycleNotRelay, "the offer's operator %q without a receiver authorizer runs its lifecycle out of band", t.Extra.OperatorType)
	}
	if l.Type != OperationRefund && t.Extra.PaymentFlow != PaymentFlowEscrow {
		return [32]byte{}, refuse(ReasonAuthCapturePayloadType, "a %s needs the escrow flow, the offer's is %q", l.Type, t.Extra.PaymentFlow)
	}
	pi := l.PaymentInfo
	if mustAddress(pi.Operator) != t.Operator {
		return [32]byte{}, refuse(ReasonAuthCaptureOperatorMismatch, "paymentInfo.operator %s is not the offer's capture authorizer %s", pi.Operator, t.Operator)
	}
	nonce, _ := parseHex32(l.SaltNonce)
	if salt, _ := parseHex32(pi.Salt); BindSalt(t.ReceiverAuthorizer, t.Policy, nonce) != salt {
		return [32]byte{}, refuse(ReasonAuthCaptureSaltBinding, "paymentInfo.salt is not the commitment of saltNonce to the offer's receiver authorizer and policy")
	}
	want := t.PaymentInfo(mustAddress(pi.Payer), [32]byte{}, pi.PreApprovalExpiry)
	want.Salt = pi.Salt
	if got := normalized(pi); got != want {
		return [32]byte{}, refuse(ReasonAuthCaptureExtra, "paymentInfo %+v is not the payment the offer describes (%+v)", got, want)
	}
	hash, err := pi.Hash(t.ChainID, t.Deployment.Escrow)
	if err != nil {
		return [32]byte{}, refuse(ReasonAuthCapturePayloadFormat, "%v", err)
	}
	var digest [32]byte
	switch l.Type {
	case OperationCapture:
		digest, err = t.CaptureDigest(hash, l.Amount, l.FeeAmount, l.FeeReceiver, l.ExpectedCapturableAmount, l.ExpectedRefundableAmount)
	case OperationVoid:
		digest = t.VoidDigest(hash)
	case OperationRefund:
		digest, err = t.RefundDigest(hash, l.Amount, l.ExpectedCapturableAmount, l.ExpectedRefundableAmount)
	}
	if err != nil {
		return [32]byte{}, refuse(ReasonAuthCapturePayloadFormat, "%v", err)
	}
	if signer, err := RecoverHex(digest, l.AuthorizerSignature); err != nil || signer != t.ReceiverAuthorizer {
		return [32]byte{}, refuse(ReasonAuthCaptureAuthorizerSig, "the %s is not signed by the receiver authorizer %s", l.Type, t.ReceiverAuthorizer)
	}
	if l.VoidAuthorizerSignature != "" {
		if signer, err := RecoverHex(t.VoidDigest(hash), l.VoidAuthorizerSignature); err != nil || signer != t.ReceiverAuthorizer {
			return [32]byte{}, refuse(ReasonAuthCaptureVoidAuthorizerSig, "the void of the rest is not signed by the receiver authorizer %s", t.ReceiverAuthorizer)
		}
	}
	return hash, nil
}

// normalized returns pi with its addresses in EIP-55 and its numbers in
// their shortest decimal spelling, so that two spellings of one payment
// compare equal. pi must have passed check.
func normalized(pi PaymentInfo) PaymentInfo {
	a := func(s string) string { return mustAddress(s).String() }
	m, _ := parseBig(pi.MaxAmount)
	salt, _ := parseHex32(pi.Salt)
	pi.Operator, pi.Payer, pi.Receiver, pi.Token, pi.FeeReceiver = a(pi.Operator), a(pi.Payer), a(pi.Receiver), a(pi.Token), a(pi.FeeReceiver)
	pi.MaxAmount, pi.Salt = m.String(), hex32(salt)
	return pi
}

// paymentName names a payment by the start of its hash in the escrow.
func paymentName(hash [32]byte) string { return fmt.Sprintf("payment %x", hash[:6]) }
