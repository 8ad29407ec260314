package evm

import (
	"context"
	"encoding/hex"
	"errors"
	"math/big"
	"slices"
	"sync"
	"time"

	"github.com/vouchkit/vouch/x402"
)

// Escrow is an [x402.Facilitator] for "auth-capture" payments on EVM test
// networks that emulates the commerce-payments AuthCaptureEscrow offline,
// for tests and demonstrations, as the "delegated" operator of the
// scheme's EVM binding: it is the escrow's operator (extra.captureAuthorizer
// must be its Operator), it relays the payer's authorization as authorize
// and the server's capture, void and refund as the lifecycle settles
// payload.type names, and it keeps a token ledger instead of a chain.
//
// The escrow flow only: authorize holds the offer's whole amount of the
// payer's balance; capture pays part or all of the hold to the receiver
// (less the fee, to the fee receiver) before the capture deadline; void
// returns what remains of the hold to the payer; refund returns up to what
// was captured and not yet refunded before the refund deadline, drawn
// from the operator's balance, as the operator refund collector draws it;
// [Escrow.Reclaim] lets the payer take back a hold after the capture
// deadline. A capture's fee must lie within the payment's fee bounds, and
// each capture and refund consent is single-use: it names the escrow
// balances it expects, and is refused when they differ.
//
// Every operation is idempotent: a settle that repeats an operation (the
// same authorization, or the same consent to the same capture, void or
// refund) gets the outcome of the first, refusals included, and changes
// nothing; concurrent repeats wait for the first. A refusal for want of
// a balance is not kept, since the balance may come.
//
// Its zero value is ready to use; it is safe for concurrent use.
type Escrow struct {
	// Networks lists the networks accepted, in either naming; nil means
	// TestNetworks.
	Networks []string
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// Operator is the address the escrow takes operations from, which
	// offers name as extra.captureAuthorizer; zero means
	// OfflineFacilitatorAddress. Supported reports it.
	Operator Address
	// OpenBalance is what every address holds of every token before any
	// transfer, so that a new payer can pay; nil means nothing. Fund
	// credits one address.
	OpenBalance *big.Int

	mu       sync.Mutex
	ledger   map[[40]byte]*big.Int // token ‖ holder → balance moved from OpenBalance
	payments map[[32]byte]*escrowPayment
	outcomes map[[32]byte]*x402.SettleResponse // by operation
}

// EscrowPayment is the escrow's state of one payment: its paymentState.
type EscrowPayment struct {
	// PaymentInfo is the payment.
	PaymentInfo PaymentInfo
	// Capturable is what the hold still holds.
	Capturable *big.Int
	// Refundable is what was captured and not yet refunded.
	Refundable *big.Int
}

type escrowPayment struct {
	info                   PaymentInfo
	token, escrow          Address
	capturable, refundable *big.Int
}

func (e *Escrow) now() time.Time {
	if e.Now != nil {
		return e.Now()
	}
	return time.Now()
}

func (e *Escrow) operator() Address {
	if e.Operator != (Address{}) {
		return e.Operator
	}
	return mustAddress(OfflineFacilitatorAddress)
}

func (e *Escrow) networks() []string {
	if e.Networks != nil {
		return e.Networks
	}
	return TestNetworks()
}

func ledgerKey(token, holder Address) [40]byte {
	var k [40]byte
	copy(k[:20], token[:])
	copy(k[20:], holder[:])
	return k
}

// balance returns holder's balance of token; e.mu is held.
func (e *Escrow) balance(token, holder Address) *big.Int {
	b := new(big.Int)
	if e.OpenBalance != nil {
		b.Set(e.OpenBalance)
	}
	if d := e.ledger[ledgerKey(token, holder)]; d != nil {
		b.Add(b, d)
	}
	return b
}

// move transfers amount of token; e.mu is held and from holds enough.
func (e *Escrow) move(token, from, to Address, amount *big.Int) {
	if e.ledger == nil {
		e.ledger = make(map[[40]byte]*big.Int)
	}
	for _, m := range []struct {
		who  Address
		sign int
	}{{from, -1}, {to, 1}} {
		k := ledgerKey(token, m.who)
		if e.ledger[k] == nil {
			e.ledger[k] = new(big.Int)
		}
		if m.sign < 0 {
			e.ledger[k].Sub(e.ledger[k], amount)
		} else {
			e.ledger[k].Add(e.ledger[k], amount)
		}
	}
}

// Fund credits holder with amount of token, as a faucet would; a negative
// amount debits it.
func (e *Escrow) Fund(token, holder Address, amount *big.Int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.ledger == nil {
		e.ledger = make(map[[40]byte]*big.Int)
	}
	k := ledgerKey(token, holder)
	if e.ledger[k] == nil {
		e.ledger[k] = new(big.Int)
	}
	e.ledger[k].Add(e.ledger[k], amount)
}

// Balance returns holder's balance of token. The escrow's own address
// ([EscrowDeployment].Escrow) holds every hold.
func (e *Escrow) Balance(token, holder Address) *big.Int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.balance(token, holder)
}

// Payment returns the state of the payment whose escrow hash is hash, and
// false when the escrow never held it.
func (e *Escrow) Payment(hash [32]byte) (EscrowPayment, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	p := e.payments[hash]
	if p == nil {
		return EscrowPayment{}, false
	}
	return EscrowPayment{PaymentInfo: p.info, Capturable: new(big.Int).Set(p.capturable), Refundable: new(big.Int).Set(p.refundable)}, true
}

// Supported lists "auth-capture" in version 2 on each accepted network,
// with the escrow's operator in extra.captureAuthorizer.
func (e *Escrow) Supported(context.Context) (*x402.SupportedResponse, error) {
	op := e.operator().String()
	out := &x402.SupportedResponse{Extensions: []string{}, Signers: map[string][]string{"eip155:*": {op}}}
	for _, n := range e.networks() {
		if c, ok := x402.NetworkCAIP2(n); ok {
			out.Kinds = append(out.Kinds, x402.SupportedKind{X402Version: x402.Version2, Scheme: x402.SchemeAuthCapture, Network: c, Extra: map[string]any{"captureAuthorizer": op}})
		}
	}
	return out, nil
}

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

// Verify checks p against the offer r and the escrow's state, changing
// nothing: the payer's authorization could be held now, or the lifecycle
// operation could run now.
func (e *Escrow) Verify(_ context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.VerifyResponse, error) {
	op, ae := e.prepare(p, r)
	if ae == nil {
		ae = e.timely(op)
	}
	if ae == nil {
		e.mu.Lock()
		_, ae = e.apply(op, false)
		e.mu.Unlock()
	}
	if ae != nil {
		return &x402.VerifyResponse{InvalidReason: ae.Reason, InvalidMessage: ae.Message, Payer: op.payer()}, nil
	}
	return &x402.VerifyResponse{IsValid: true, Payer: op.payer()}, nil
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

// Settle runs the operation p asks for under the offer r: the payer's
// authorization is held (authorize), a lifecycle payload captures, voids
// or refunds. A repeat of an operation gets its first outcome.
func (e *Escrow) Settle(_ context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.SettleResponse, error) {
	op, ae := e.prepare(p, r)
	if ae != nil {
		return &x402.SettleResponse{ErrorReason: ae.Reason, ErrorMessage: ae.Message, Payer: op.payer(), Network: r.Network}, nil
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	if first := e.outcomes[op.key]; first != nil {
		out := *first
		return &out, nil
	}
	var amount string
	if ae = e.timely(op); ae == nil {
		amount, ae = e.apply(op, true)
	}
	var out *x402.SettleResponse
	if ae != nil {
		out = &x402.SettleResponse{ErrorReason: ae.Reason, ErrorMessage: ae.Message, Payer: op.payer(), Network: r.Network}
		if ae.Reason == ReasonAuthCaptureInsufficientBal || ae.Reason == ReasonAuthCaptureRefundFunding {
			return out, nil // the balance may come: not the operation's outcome
		}
	} else {
		tx := keccak([]byte("vouch local escrow"), op.key[:])
		out = &x402.SettleResponse{Success: true, Payer: op.payer(), Transaction: "0x" + hex.EncodeToString(tx[:]), Network: r.Network, Amount: amount}
	}
	if e.outcomes == nil {
		e.outcomes = make(map[[32]byte]*x402.SettleResponse)
	}
	e.outcomes[op.key] = out
	copied := *out
	return &copied, nil
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

// Reclaim returns to the payer what remains of the hold of the payment
// whose escrow hash is hash once its capture deadline has passed, as the
// escrow's reclaim does, for caller, who must be the payer. It returns
// the amount returned. Reclaim is the payer's own call: no facilitator
// relays it.
func (e *Escrow) Reclaim(hash [32]byte, caller Address) (*big.Int, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	pay := e.payments[hash]
	switch {
	case pay == nil:
		return nil, refuse(ReasonAuthCaptureZeroAuthorization, "%s was never held", paymentName(hash))
	case caller != mustAddress(pay.info.Payer):
		return nil, refuse(ReasonAuthCaptureSender, "only the payer %s may reclaim, not %s", pay.info.Payer, caller)
	case uint64(e.now().Unix()) < pay.info.AuthorizationExpiry:
		return nil, refuse(ReasonAuthCaptureBeforeExpiry, "reclaim opens at the capture deadline %d", pay.info.AuthorizationExpiry)
	case pay.capturable.Sign() == 0:
		return nil, refuse(ReasonAuthCaptureZeroAuthorization, "%s holds nothing to reclaim", paymentName(hash))
	}
	amount := pay.capturable
	e.move(pay.token, pay.escrow, caller, amount)
	pay.capturable = new(big.Int)
	return new(big.Int).Set(amount), nil
}

var _ x402.Facilitator = (*Escrow)(nil)
