package evm

import (
	"context"
	"errors"
	"fmt"
	"math/big"

	"github.com/vouchkit/vouch/x402"
)

// EscrowAuthorizer is an [x402.EscrowSigner] for "auth-capture" payments
// on EVM networks: it signs each lifecycle operation as the payment's
// receiver authorizer (extra.receiverAuthorizer of the offer), with
// Key, naming the escrow balances the ledger records: a Held payment
// capturable for its whole hold and refundable for nothing, a captured
// one capturable for nothing and refundable for what was captured and
// not refunded. A capture of less than the hold voids the rest in the
// same settle. It is safe for concurrent use.
type EscrowAuthorizer struct {
	// Key is the receiver authorizer's key.
	Key *PrivateKey
}

var _ x402.EscrowSigner = EscrowAuthorizer{}

// EscrowPayload implements [x402.EscrowSigner].
func (a EscrowAuthorizer) EscrowPayload(_ context.Context, p x402.EscrowPayment, op, amount string) (*x402.PaymentPayload, error) {
	if a.Key == nil {
		return nil, errors.New("evm: EscrowAuthorizer without a Key")
	}
	terms, err := ParseAuthCaptureOffer(p.Offer)
	if err != nil {
		return nil, err
	}
	pl, err := DecodeAuthCapturePayload(p.Payload)
	if err != nil {
		return nil, err
	}
	hold, err := terms.verify(pl, nil) // the hold was confirmed: its time is past
	if err != nil {
		return nil, err
	}
	capturable, refundable := new(big.Int), new(big.Int)
	if p.State == x402.EscrowHeld {
		capturable = new(big.Int).Set(terms.MaxAmount)
	} else {
		c, cerr := parseBig(p.Captured)
		r, rerr := parseBig(p.Refunded)
		if cerr != nil || rerr != nil {
			return nil, fmt.Errorf("evm: escrow payment %s: captured %q, refunded %q", p.ID, p.Captured, p.Refunded)
		}
		refundable.Sub(c, r)
	}
	var l AuthCaptureLifecycle
	switch op {
	case x402.EscrowVoid:
		l, err = terms.SignVoid(a.Key, hold.PaymentInfo, pl.SaltNonce)
	case x402.EscrowCapture, x402.EscrowRefund:
		n, perr := parseBig(amount)
		if perr != nil {
			return nil, fmt.Errorf("evm: %s amount: %w", op, perr)
		}
		if op == x402.EscrowCapture {
			l, err = terms.SignCapture(a.Key, hold.PaymentInfo, pl.SaltNonce, n, capturable, refundable, n.Cmp(capturable) < 0)
		} else {
			l, err = terms.SignRefund(a.Key, hold.PaymentInfo, pl.SaltNonce, n, capturable, refundable)
		}
	default:
		return nil, fmt.Errorf("evm: unknown escrow operation %q", op)
	}
	if err != nil {
		return nil, err
	}
	return l.Payment(p.Offer)
}
