// Package escrow finishes "auth-capture" payments after the request that
// held them: it recovers the payments a server left held, and refunds
// the ones whose answers their callers prove wrong.
//
// Package x402 holds the payment's record and its contract (the
// [x402.EscrowPayment], the [x402.EscrowLedger] that keeps it, the
// [x402.EscrowAuthorizer] that consents to its operations) and the
// Middleware that holds, captures and voids within a request. What
// happens to a payment after its request is here:
//
//   - [Recovery] finishes the payments a server that died left Held, by
//     their recorded verdicts, before the server serves again
//     ([NewRecovery] builds it from the Middleware's configuration);
//     servers sharing a ledger that is a [Claimer] finish each payment
//     once.
//   - [Disputes] refunds a captured payment whose caller later reports
//     the answer wrong, by the seller's [RefundPolicy] ([RefundWhole] is
//     one), once per payment and before its refund deadline; only the
//     call's caller may dispute it.
//
// Each operation runs through [x402.SettleEscrow], keyed in the ledger,
// so that a run repeated, or run on two servers at once, sends it once.
package escrow
