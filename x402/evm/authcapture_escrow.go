package evm

import (
	"context"
	"encoding/hex"
	"math/big"
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
