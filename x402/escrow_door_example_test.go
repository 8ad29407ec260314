package x402_test

import (
	"context"
	"fmt"
	"math/big"
	"time"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// A door that sells work outside HTTP headers runs the escrow's steps
// itself: the deadlines in the terms, the payer's deadlines accepted, the
// hold placed before the work, then the verdict and its capture, here on
// the offline escrow.
func ExampleEscrow() {
	ctx := context.Background()
	authorizer, _ := evm.ParsePrivateKey("0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba")
	operator, _ := evm.ParseAddress(evm.OfflineFacilitatorAddress)
	chain := &evm.Escrow{OpenBalance: big.NewInt(1_000_000)}
	escrow, err := x402.NewEscrow(x402.EscrowConfig{Authorizer: evm.ReceiverAuthorizer{Key: authorizer}}, chain, 0, nil, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	offer, _ := evm.AuthCaptureUSDC("eip155:84532", "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", "$0.05", operator, authorizer.Address())
	price := x402.Price{Accepts: []x402.PaymentRequirements{offer}}

	// The terms the payer reads, and what it signs.
	now := time.Now()
	terms := escrow.Offer(offer, now)
	payer, _ := evm.NewPayer("0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318")
	proof, _ := payer.Pay(ctx, terms)
	p := &x402.PaymentPayload{X402Version: x402.Version2, Accepted: terms, Payload: proof.Payload}

	// The door matches the payment, holds it, does the work, and captures.
	matched, reason := escrow.Terms(escrow.Candidates(price.Accepts, p.Accepted)[0], p.Accepted, price, now)
	if reason != "" {
		fmt.Println(reason)
		return
	}
	held, err := escrow.Hold(ctx, p, matched, payer.Address().String())
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(held.State, held.Amount)
	sr, bought := escrow.Finish(ctx, escrow.Decide(ctx, held, "VALID", held.Amount), nil)
	report, _ := x402.EscrowFromSettlement(&sr)
	fmt.Println(report.State, report.Verdict, report.Captured, bought)
	// Output:
	// held 50000
	// captured VALID 50000 true
}
