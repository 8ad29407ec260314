package trust

import (
	"context"
	"strconv"

	"github.com/vouchkit/vouch/receipt"
)

// EscrowTerms are the terms of a call paid in escrow (x402
// "auth-capture"): the hold placed before the call runs, and how its
// verdict charges it. The route that took the payment states them with
// [WithEscrow] (trustpay.ChargeRuns does, on the x402 trust call).
type EscrowTerms struct {
	// Scheme is the payment's scheme, "auth-capture".
	Scheme string
	// Network and Asset name the money: the CAIP-2 network and the
	// token's address on it.
	Network, Asset string
	// ID is the escrowed payment's id (its PaymentInfo hash on EVM
	// networks).
	ID string
	// Held is the amount held, in atomic units.
	Held uint64
	// PerRun is the price of one run when the call is charged by the runs
	// it launched; zero charges the whole hold.
	PerRun uint64
}

type escrowCtx struct{}

// WithEscrow returns a context whose calls are paid in escrow on terms t:
// the response's evidence.payment and its receipt's decision.payment
// state the payment and what the verdict commits it to ([EscrowTerms.Commit]).
func WithEscrow(ctx context.Context, t EscrowTerms) context.Context {
	return context.WithValue(ctx, escrowCtx{}, t)
}

// Commit returns what a call's verdict commits the hold to. A definitive
// verdict, VALID or INVALID, is the product bought, whichever way it
// goes (a validator paid only when it says VALID would have a reason to
// say it): it captures PerRun times the runs launched (at most Held), or
// the whole hold when PerRun is zero; a capture of nothing (no run
// launched) is a void, as the route that holds the payment treats it.
// Any other status (RETRY, NEEDS_SPEC, and the arbitration statuses,
// which this route does not sell) decides nothing and voids the hold.
func (t EscrowTerms) Commit(status Status, runs int) *receipt.Payment {
	p := &receipt.Payment{Scheme: t.Scheme, Network: t.Network, Asset: t.Asset, ID: t.ID,
		Held: strconv.FormatUint(t.Held, 10), Outcome: "void", Capture: "0"}
	if t.PerRun > 0 {
		p.PerRun = strconv.FormatUint(t.PerRun, 10)
	}
	if status != StatusValid && status != StatusInvalid {
		return p
	}
	capture := t.Held
	if t.PerRun > 0 && runs >= 0 && uint64(runs) <= t.Held/t.PerRun {
		capture = uint64(runs) * t.PerRun
	}
	if capture == 0 {
		return p
	}
	p.Outcome, p.Capture = "capture", strconv.FormatUint(capture, 10)
	return p
}

// escrowPayment returns what the verdict of resp commits the escrowed
// payment of ctx to, and nil when ctx carries no [EscrowTerms].
func escrowPayment(ctx context.Context, resp *Response) *receipt.Payment {
	t, ok := ctx.Value(escrowCtx{}).(EscrowTerms)
	if !ok {
		return nil
	}
	return t.Commit(resp.Status, resp.Evidence.Launched)
}
