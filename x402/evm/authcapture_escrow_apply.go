package evm

import (
	"errors"
	"math/big"
	"slices"

	"github.com/vouchkit/vouch/x402"
)

// operation is a settle checked against its terms, before the escrow's
// state: the payer's authorization (hold set) or a lifecycle payload.
type operation struct {
	terms     AuthCaptureTerms
	hold      *AuthCaptureHold
	lifecycle *AuthCaptureLifecycle
	hash      [32]byte // the payment's escrow hash
	key       [32]byte // the operation's identity, for idempotency
}

// prepare runs every check of p against r that does not read the escrow.
func (e *Escrow) prepare(p *x402.PaymentPayload, r x402.PaymentRequirements) (operation, *AuthCaptureError) {
	var op operation
	switch {
	case p == nil || p.X402Version != x402.Version2:
		return op, refuse(ReasonInvalidVersion, "the auth-capture scheme is paid in x402Version 2")
	case p.Accepted.Scheme != x402.SchemeAuthCapture || r.Scheme != x402.SchemeAuthCapture:
		return op, refuse(ReasonAuthCaptureScheme, "scheme %q of the payment and %q of the offer are not both %q", p.Accepted.Scheme, r.Scheme, x402.SchemeAuthCapture)
	case !x402.SameNetwork(p.Accepted.Network, r.Network):
		return op, refuse(ReasonAuthCaptureNetworkMismatch, "the payment is on %q, the offer on %q", p.Accepted.Network, r.Network)
	case !slices.ContainsFunc(e.networks(), func(n string) bool { return x402.SameNetwork(n, r.Network) }):
		return op, refuse(ReasonInvalidNetwork, "network %q is not accepted here", r.Network)
	}
	terms, err := ParseAuthCaptureOffer(r)
	if errors.Is(err, ErrAutoCapture) {
		return op, refuse(ReasonAuthCapturePaymentFlow, "%v", err)
	}
	if err != nil {
		return op, refuse(ReasonAuthCaptureExtra, "%v", err)
	}
	op.terms = terms
	switch {
	case terms.Extra.OperatorType != OperatorDelegated:
		return op, refuse(ReasonAuthCaptureOperatorType, "the offline escrow is a %q operator, not %q", OperatorDelegated, terms.Extra.OperatorType)
	case terms.Operator != e.operator():
		return op, refuse(ReasonAuthCaptureNotAdmitted, "extra.captureAuthorizer %s is not this escrow's operator %s", terms.Operator, e.operator())
	case terms.Extra.PaymentFlow != PaymentFlowEscrow:
		return op, refuse(ReasonAuthCapturePaymentFlow, "the offline escrow settles the %q flow only", PaymentFlowEscrow)
	}
	kind, err := AuthCaptureOperation(p.Payload)
	if err != nil {
		return op, refuse(ReasonAuthCapturePayloadFormat, "%v", err)
	}
	if kind == "" {
		pl, err := DecodeAuthCapturePayload(p.Payload)
		if err != nil {
			return op, refuse(ReasonAuthCapturePayloadFormat, "%v", err)
		}
		// The authorization's time is checked by timely, after a repeat
		// found its first outcome.
		hold, err := terms.verify(pl, nil)
		if err != nil {
			return op, asAuthCaptureError(err)
		}
		op.hold, op.hash = &hold, hold.Hash
		op.key = keccak([]byte("authorize"), hold.Hash[:])
		return op, nil
	}
	l, err := DecodeAuthCaptureLifecycle(p.Payload)
	if err != nil {
		reason := ReasonAuthCapturePayloadFormat
		if !slices.Contains([]string{OperationCapture, OperationVoid, OperationRefund}, kind) {
			reason = ReasonAuthCapturePayloadType
		}
		return op, refuse(reason, "%v", err)
	}
	if op.hash, err = terms.CheckLifecycle(l); err != nil {
		return op, asAuthCaptureError(err)
	}
	op.lifecycle = &l
	// The operation is its type, its payment and every parameter the
	// consent signs: a repeat of it is the same operation.
	parts := [][]byte{[]byte(l.Type), op.hash[:]}
	for _, s := range []string{l.Amount, l.FeeAmount, l.ExpectedCapturableAmount, l.ExpectedRefundableAmount} {
		n := new(big.Int)
		if s != "" {
			n, _ = parseBig(s)
		}
		parts = append(parts, n.FillBytes(make([]byte, 32)))
	}
	if l.FeeReceiver != "" {
		fr := mustAddress(l.FeeReceiver)
		parts = append(parts, fr[:])
	}
	if l.VoidAuthorizerSignature != "" {
		parts = append(parts, []byte("and void"))
	}
	op.key = keccak(parts...)
	return op, nil
}

func asAuthCaptureError(err error) *AuthCaptureError {
	var ae *AuthCaptureError
	if errors.As(err, &ae) {
		return ae
	}
	return refuse(ReasonAuthCapturePayloadFormat, "%v", err)
}

// timely checks the time window of an authorization to hold (the
// binding's checks 7 and 8); a lifecycle operation's deadlines are the
// escrow's, checked by apply.
func (e *Escrow) timely(op operation) *AuthCaptureError {
	if op.hold == nil {
		return nil
	}
	now := e.now()
	if _, err := op.terms.Verify(op.hold.Payload, now); err != nil {
		return asAuthCaptureError(err)
	}
	return nil
}

func (op operation) payer() string {
	switch {
	case op.hold != nil:
		return op.hold.Payer.String()
	case op.lifecycle != nil:
		return mustAddress(op.lifecycle.PaymentInfo.Payer).String()
	}
	return ""
}

// apply checks op against the escrow's state and, when commit is set,
// carries it out, returning the amount settled. e.mu is held.
func (e *Escrow) apply(op operation, commit bool) (string, *AuthCaptureError) {
	now := uint64(e.now().Unix())
	t := op.terms
	escrow := t.Deployment.Escrow
	pay := e.payments[op.hash]
	if op.hold != nil {
		info := op.hold.PaymentInfo
		if pay != nil {
			return "", refuse(ReasonAuthCaptureAlreadyCollected, "%s was already collected", paymentName(op.hash))
		}
		if now >= info.PreApprovalExpiry {
			return "", refuse(ReasonAuthCaptureExpired, "the authorization expired at %d", info.PreApprovalExpiry)
		}
		if bal := e.balance(t.Token, op.hold.Payer); bal.Cmp(t.MaxAmount) < 0 {
			return "", refuse(ReasonAuthCaptureInsufficientBal, "the payer holds %s, the hold is %s", bal, t.MaxAmount)
		}
		if commit {
			e.move(t.Token, op.hold.Payer, escrow, t.MaxAmount)
			if e.payments == nil {
				e.payments = make(map[[32]byte]*escrowPayment)
			}
			e.payments[op.hash] = &escrowPayment{info: info, token: t.Token, escrow: escrow, capturable: new(big.Int).Set(t.MaxAmount), refundable: new(big.Int)}
		}
		return t.MaxAmount.String(), nil
	}
	l := op.lifecycle
	state := escrowPayment{info: l.PaymentInfo, capturable: new(big.Int), refundable: new(big.Int)}
	if pay != nil {
		state = *pay
	}
	payer := mustAddress(l.PaymentInfo.Payer)
	expected := func() *AuthCaptureError {
		c, _ := parseBig(l.ExpectedCapturableAmount)
		r, _ := parseBig(l.ExpectedRefundableAmount)
		if c.Cmp(state.capturable) != 0 || r.Cmp(state.refundable) != 0 {
			return refuse(ReasonAuthCaptureUnexpectedState, "the consent expects capturable %s and refundable %s, the escrow holds %s and %s", c, r, state.capturable, state.refundable)
		}
		return nil
	}
	switch l.Type {
	case OperationCapture:
		amount, _ := parseBig(l.Amount)
		fee, _ := parseBig(l.FeeAmount)
		feeTo := mustAddress(l.FeeReceiver)
		if now >= l.PaymentInfo.AuthorizationExpiry {
			return "", refuse(ReasonAuthCaptureCaptureExpired, "the capture deadline %d has passed", l.PaymentInfo.AuthorizationExpiry)
		}
		if ae := expected(); ae != nil {
			return "", ae
		}
		switch {
		case amount.Sign() == 0:
			return "", refuse(ReasonAuthCaptureAmountMismatch, "a capture of zero")
		case amount.Cmp(state.capturable) > 0:
			return "", refuse(ReasonAuthCaptureInsufficientAuth, "capturing %s exceeds the hold's %s", amount, state.capturable)
		case l.VoidAuthorizerSignature != "" && amount.Cmp(state.capturable) == 0:
			return "", refuse(ReasonAuthCaptureVoidFullCapture, "a capture of the whole hold leaves nothing to void")
		case fee.Cmp(bps(amount, l.PaymentInfo.MinFeeBps)) < 0 || fee.Cmp(bps(amount, l.PaymentInfo.MaxFeeBps)) > 0:
			return "", refuse(ReasonAuthCaptureFeeOutOfRange, "a fee of %s on %s is outside %d to %d basis points", fee, amount, l.PaymentInfo.MinFeeBps, l.PaymentInfo.MaxFeeBps)
		case fee.Sign() > 0 && feeTo == (Address{}):
			return "", refuse(ReasonAuthCaptureZeroFeeReceiver, "a fee of %s to the zero address", fee)
		case mustAddress(l.PaymentInfo.FeeReceiver) != (Address{}) && feeTo != mustAddress(l.PaymentInfo.FeeReceiver):
			return "", refuse(ReasonAuthCaptureFeeReceiver, "the fee goes to %s, the payment names %s", feeTo, l.PaymentInfo.FeeReceiver)
		}
		if commit {
			pay.capturable.Sub(pay.capturable, amount)
			pay.refundable.Add(pay.refundable, amount)
			e.move(t.Token, escrow, mustAddress(l.PaymentInfo.Receiver), new(big.Int).Sub(amount, fee))
			if fee.Sign() > 0 {
				e.move(t.Token, escrow, feeTo, fee)
			}
			if l.VoidAuthorizerSignature != "" {
				e.move(t.Token, escrow, payer, pay.capturable)
				pay.capturable = new(big.Int)
			}
		}
		return amount.String(), nil
	case OperationVoid:
		if state.capturable.Sign() == 0 {
			return "", refuse(ReasonAuthCaptureZeroAuthorization, "%s holds nothing to void", paymentName(op.hash))
		}
		if commit {
			e.move(t.Token, escrow, payer, pay.capturable)
			pay.capturable = new(big.Int)
		}
		return "", nil
	default: // refund
		amount, _ := parseBig(l.Amount)
		if now >= l.PaymentInfo.RefundExpiry {
			return "", refuse(ReasonAuthCaptureRefundExpired, "the refund deadline %d has passed", l.PaymentInfo.RefundExpiry)
		}
		if ae := expected(); ae != nil {
			return "", ae
		}
		switch {
		case amount.Sign() == 0:
			return "", refuse(ReasonAuthCaptureAmountMismatch, "a refund of zero")
		case amount.Cmp(state.refundable) > 0:
			return "", refuse(ReasonAuthCaptureRefundExceeds, "refunding %s exceeds the %s captured and not refunded", amount, state.refundable)
		}
		operator := mustAddress(l.PaymentInfo.Operator)
		if bal := e.balance(t.Token, operator); bal.Cmp(amount) < 0 {
			return "", refuse(ReasonAuthCaptureRefundFunding, "the operator %s, who funds refunds, holds %s of the %s", operator, bal, amount)
		}
		if commit {
			pay.refundable.Sub(pay.refundable, amount)
			e.move(t.Token, operator, payer, amount)
		}
		return amount.String(), nil
	}
}
