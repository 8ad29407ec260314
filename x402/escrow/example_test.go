package escrow_test

import (
	"context"
	"fmt"
	"math/big"
	"time"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/escrow"
	"github.com/vouchkit/vouch/x402/evm"
)

// A server held a payment and recorded its verdict, then stopped before
// the capture; the recovery it runs when it starts again captures the
// payment by that verdict, here on the offline escrow.
func ExampleRecovery() {
	ctx := context.Background()
	key, _ := evm.ParsePrivateKey("0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba")
	authorizer := evm.ReceiverAuthorizer{Key: key}
	operator, _ := evm.ParseAddress(evm.OfflineFacilitatorAddress)
	chain := &evm.Escrow{OpenBalance: big.NewInt(1_000_000)}
	ledger := &x402.MemoryEscrowLedger{}
	door, _ := x402.NewEscrow(x402.EscrowConfig{Authorizer: authorizer, Ledger: ledger}, chain, 0, nil, nil)

	// The hold and the verdict, recorded; the capture never sent.
	offer, _ := evm.AuthCaptureUSDC("eip155:84532", "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", "$0.05", operator, key.Address())
	terms := door.Offer(offer, time.Now())
	payer, _ := evm.NewPayer("0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318")
	proof, _ := payer.Pay(ctx, terms)
	held, err := door.Hold(ctx, &x402.PaymentPayload{X402Version: x402.Version2, Accepted: terms, Payload: proof.Payload}, terms, payer.Address().String())
	if err != nil {
		fmt.Println(err)
		return
	}
	door.Decide(ctx, held, "VALID", held.Amount)

	// On the next start, before serving.
	r := &escrow.Recovery{Ledger: ledger, Facilitator: chain, Authorizer: authorizer}
	done, err := r.Finish(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, f := range done {
		fmt.Println(f.Outcome.Operation, f.Outcome.Amount, f.Outcome.Settlement.Success, f.Sent)
	}
	p, _ := ledger.Get(ctx, held.ID)
	fmt.Println(p.State, p.Captured)
	// Output:
	// capture 50000 true true
	// captured 50000
}
