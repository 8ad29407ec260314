package x402test

import (
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"math/big"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// Keys and amounts of an [EscrowBed]: test keys, never funded on any
// chain.
const (
	escrowPayerKey      = "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"
	escrowAuthorizerKey = "0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba"
	escrowUSDC          = "0x036CbD53842c5426634e7929541eC2318f3dCF7e"
	escrowPayTo         = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C"
	// EscrowOpenBalance is what every address of an EscrowBed holds
	// before any transfer.
	EscrowOpenBalance = 1_000_000
	// EscrowHoldAmount is the hold of the bed's offer: 0.05 USDC.
	EscrowHoldAmount = 50_000
)

// EscrowBed is the offline escrow (evm.Escrow) served over loopback HTTP
// as a facilitator, with a payer, a receiver authorizer and an
// "auth-capture" offer (a hold of EscrowHoldAmount for an hour,
// refundable for a day, no fee), for tests of escrow ledgers and their
// recovery whose balances show what was held, captured, voided and
// refunded. A process that holds through the bed's URL (as a child
// process killed mid-way does) moves the parent's balances.
type EscrowBed struct {
	// Escrow is the offline chain.
	Escrow *evm.Escrow
	// Facilitator reaches Escrow over HTTP; URL is its address.
	Facilitator *x402.FacilitatorClient
	URL         string
	// Offer is the offer payers accept.
	Offer x402.PaymentRequirements
	// Authorizer consents to the lifecycle as the offer's receiver
	// authorizer.
	Authorizer evm.ReceiverAuthorizer
}

// NewEscrowBed starts a bed; its server is closed when t ends.
func NewEscrowBed(t testing.TB) *EscrowBed {
	t.Helper()
	authorizer, err := evm.ParsePrivateKey(escrowAuthorizerKey)
	if err != nil {
		t.Fatal(err)
	}
	b := &EscrowBed{Escrow: &evm.Escrow{OpenBalance: big.NewInt(EscrowOpenBalance)}, Authorizer: evm.ReceiverAuthorizer{Key: authorizer}}
	srv := httptest.NewServer(x402.NewFacilitatorHandler(b.Escrow))
	t.Cleanup(srv.Close)
	b.URL = srv.URL
	b.Facilitator = &x402.FacilitatorClient{URL: srv.URL, HTTPClient: srv.Client()}
	now := uint64(time.Now().Unix())
	b.Offer = x402.PaymentRequirements{
		Scheme: x402.SchemeAuthCapture, Network: "eip155:84532", Amount: fmt.Sprint(EscrowHoldAmount), Asset: escrowUSDC, PayTo: escrowPayTo, MaxTimeoutSeconds: 60,
		Extra: evm.AuthCaptureExtra{
			Name: "USDC", Version: "2", CaptureAuthorizer: evm.OfflineFacilitatorAddress, ReceiverAuthorizer: authorizer.Address().String(),
			FeeRecipient: evm.Address{}.String(), CaptureDeadline: now + 3600, RefundDeadline: now + 86400,
		}.Map(),
	}
	return b
}

// EscrowBalances are the balances an escrow bed shows, in atomic units.
type EscrowBalances struct {
	Payer, Escrow, Receiver int64
}

// Balances returns the bed's balances now.
func (b *EscrowBed) Balances() EscrowBalances {
	terms, err := evm.ParseAuthCaptureOffer(b.Offer)
	if err != nil {
		panic(err) // the bed's own offer
	}
	payer, _ := evm.ParsePrivateKey(escrowPayerKey)
	bal := func(a evm.Address) int64 { return b.Escrow.Balance(terms.Token, a).Int64() }
	return EscrowBalances{Payer: bal(payer.Address()), Escrow: bal(terms.Deployment.Escrow), Receiver: bal(terms.Receiver)}
}

// HoldEscrow has the bed's payer authorize offer's hold (its n-th payment:
// n picks its salt) and places it through the facilitator f, as a route
// does before its work, and returns the payment as a route records it in
// its ledger: its id is the PaymentInfo hash.
func HoldEscrow(ctx context.Context, f x402.Facilitator, offer x402.PaymentRequirements, n int) (x402.EscrowPayment, error) {
	payer, err := evm.ParsePrivateKey(escrowPayerKey)
	if err != nil {
		return x402.EscrowPayment{}, err
	}
	terms, err := evm.ParseAuthCaptureOffer(offer)
	if err != nil {
		return x402.EscrowPayment{}, err
	}
	now := time.Now()
	pl, err := evm.SignAuthCapture(payer, terms, now, [32]byte{byte(n), byte(n >> 8), 0x5a})
	if err != nil {
		return x402.EscrowPayment{}, err
	}
	hold, err := terms.Verify(pl, now)
	if err != nil {
		return x402.EscrowPayment{}, err
	}
	raw, err := json.Marshal(pl)
	if err != nil {
		return x402.EscrowPayment{}, err
	}
	sr, err := f.Settle(ctx, &x402.PaymentPayload{X402Version: x402.Version2, Accepted: offer, Payload: raw}, offer)
	if err != nil {
		return x402.EscrowPayment{}, err
	}
	if !sr.Success {
		return x402.EscrowPayment{}, fmt.Errorf("x402test: hold refused: %s: %s", sr.ErrorReason, sr.ErrorMessage)
	}
	return x402.EscrowPayment{
		ID: "0x" + hex.EncodeToString(hold.Hash[:]), Offer: offer, Payload: raw, Payer: hold.Payer.String(), Amount: terms.MaxAmount.String(),
		HeldAt:          now,
		CaptureDeadline: time.Unix(int64(hold.PaymentInfo.AuthorizationExpiry), 0),
		RefundDeadline:  time.Unix(int64(hold.PaymentInfo.RefundExpiry), 0),
		Hold:            *sr,
	}, nil
}

// Plus returns b moved by the deltas given.
func (b EscrowBalances) Plus(payer, escrow, receiver int64) EscrowBalances {
	return EscrowBalances{b.Payer + payer, b.Escrow + escrow, b.Receiver + receiver}
}
