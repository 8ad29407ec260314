package x402

// SchemeAuthCapture is the x402 "auth-capture" scheme: the payer
// authorizes at most the offer's amount into an escrow, and the payment
// then has a lifecycle (held, captured, voided, refunded, or reclaimed by
// the payer after the capture deadline). On EVM networks the escrow is the
// commerce-payments AuthCaptureEscrow; package evm has the wire, the
// PaymentInfo hash, the signatures and an offline escrow.
//
// The first settle of an "auth-capture" payload places the hold
// (authorize); later settles name their operation in payload.type
// ("capture", "void", "refund") and carry the receiver authorizer's
// EIP-712 consent.
const SchemeAuthCapture = "auth-capture"
