package evm_test

import (
	"context"
	"encoding/json"
	"fmt"
	"math/big"
	"time"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// An escrowed payment on the offline escrow: the payer's authorization
// holds 1 USDC, the server captures 0.60 and voids the rest, then refunds
// 0.10 of what it captured.
func ExampleEscrow() {
	ctx := context.Background()
	now := time.Unix(1_800_000_000, 0)
	payer, _ := evm.ParsePrivateKey("0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318")
	authorizer, _ := evm.ParsePrivateKey("0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba")
	usdc, _ := evm.ParseAddress("0x036CbD53842c5426634e7929541eC2318f3dCF7e")

	escrow := &evm.Escrow{Now: func() time.Time { return now }}
	escrow.Fund(usdc, payer.Address(), big.NewInt(5_000_000))
	operator, _ := evm.ParseAddress(evm.OfflineFacilitatorAddress)
	escrow.Fund(usdc, operator, big.NewInt(1_000_000)) // refunds are drawn from the operator

	offer := x402.PaymentRequirements{
		Scheme: x402.SchemeAuthCapture, Network: "eip155:84532", Amount: "1000000", Asset: usdc.String(),
		PayTo: "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", MaxTimeoutSeconds: 60,
		Extra: evm.AuthCaptureExtra{
			Name: "USDC", Version: "2", CaptureAuthorizer: evm.OfflineFacilitatorAddress,
			ReceiverAuthorizer: authorizer.Address().String(), FeeRecipient: evm.Address{}.String(),
			CaptureDeadline: 1_800_003_600, RefundDeadline: 1_800_604_800,
		}.Map(),
	}
	terms, err := evm.ParseAuthCaptureOffer(offer)
	if err != nil {
		fmt.Println(err)
		return
	}
	settle := func(payload any) *x402.SettleResponse {
		raw, _ := json.Marshal(payload)
		sr, _ := escrow.Settle(ctx, &x402.PaymentPayload{X402Version: 2, Accepted: offer, Payload: raw}, offer)
		return sr
	}
	balances := func(step string) {
		fmt.Printf("%-22s payer %s, escrow %s, receiver %s\n", step,
			escrow.Balance(usdc, payer.Address()), escrow.Balance(usdc, terms.Deployment.Escrow), escrow.Balance(usdc, terms.Receiver))
	}

	// The payer signs once; the escrow holds the whole amount.
	p, _ := evm.SignAuthCapture(payer, terms, now, [32]byte{1})
	hold, _ := terms.Verify(p, now)
	fmt.Println("authorize:", settle(p).Success)
	balances("held")

	// The server's authorizer consents to a capture of 0.60 that voids
	// the rest, against the balances it expects the escrow to hold.
	capture, _ := terms.SignCapture(authorizer, hold.PaymentInfo, p.SaltNonce, big.NewInt(600_000), big.NewInt(1_000_000), big.NewInt(0), true)
	fmt.Println("capture and void:", settle(capture).Success)
	balances("captured, rest voided")

	refund, _ := terms.SignRefund(authorizer, hold.PaymentInfo, p.SaltNonce, big.NewInt(100_000), big.NewInt(0), big.NewInt(600_000))
	fmt.Println("refund:", settle(refund).Success)
	balances("refunded 0.10")

	// The same consent again is the same operation: its first outcome.
	again := settle(refund)
	fmt.Println("refund again:", again.Success, again.Amount)
	balances("unchanged")
	// Output:
	// authorize: true
	// held                   payer 4000000, escrow 1000000, receiver 0
	// capture and void: true
	// captured, rest voided  payer 4400000, escrow 0, receiver 600000
	// refund: true
	// refunded 0.10          payer 4500000, escrow 0, receiver 600000
	// refund again: true 100000
	// unchanged              payer 4500000, escrow 0, receiver 600000
}
