// Package evm implements the x402 "exact", "upto" and "auth-capture" payment
// schemes on EVM networks. It holds a [Payer] that signs EIP-3009
// TransferWithAuthorization messages ("exact"), Permit2
// PermitWitnessTransferFrom messages ("upto") and the escrow authorizations
// of "auth-capture" as EIP-712 typed data, an offline [Facilitator] that
// checks "exact" and "upto" payments as the contracts would and records
// settlements, and an offline [Escrow] for "auth-capture", for tests and
// demonstration servers.
//
// # Signing
//
// The digest is keccak256(0x19 ‖ 0x01 ‖ domain separator ‖ message hash)
// ([TransferDigest]). The domain is the token's: extra.name and
// extra.version of the offer, the chain id of its network and its asset as
// verifying contract. The message is TransferWithAuthorization(address
// from, address to, uint256 value, uint256 validAfter, uint256 validBefore,
// bytes32 nonce) with a nonce of 32 random bytes and a window from
// now-600 s to now+maxTimeoutSeconds. Signatures are 65 bytes r‖s‖v with
// v 27 or 28 and a low s.
//
// The package uses github.com/decred/dcrd/dcrec/secp256k1/v4 for the curve
// (RFC 6979 signing with public key recovery) and the legacy Keccak-256 of
// golang.org/x/crypto/sha3, rather than go-ethereum: two small,
// well-maintained modules instead of a whole Ethereum client in every
// program that embeds vouch. The encoding of one fixed EIP-712 type takes
// a few lines and is pinned by the known answer of the x402 specification's
// example.
//
// # The upto scheme
//
// An "upto" payer signs, in Permit2's domain (name "Permit2", the chain
// id, [Permit2Address]), a PermitWitnessTransferFrom whose permitted
// amount is the offer's amount, the most the server may charge, whose
// spender is the upto proxy ([UptoProxyAddress]) and whose witness
// Witness(address to, address facilitator, uint256 validAfter) binds the
// recipient (payTo), the one facilitator allowed to settle (the offer's
// extra.facilitatorAddress) and the start of its validity ([UptoDigest]).
// The nonce is 256 random bits written in decimal; the deadline is
// now+maxTimeoutSeconds. These are the types and rules of the x402 upto
// specification and of the official @x402/evm package, whose signature of
// a fixed authorization the tests pin. [UptoUSDC] builds an offer.
//
// # The auth-capture scheme
//
// "auth-capture" holds the payment in the commerce-payments
// AuthCaptureEscrow (the scheme's EVM binding, v1.1; deployments
// [EscrowV1_1], the default, and [EscrowV1_0]). [ParseAuthCaptureOffer]
// checks an offer's extra ([AuthCaptureExtra]) into [AuthCaptureTerms];
// the payer signs one token authorization to the deployment's collector,
// ERC-3009 ReceiveWithAuthorization (the default) or a Permit2
// PermitTransferFrom, whose nonce is the payer-agnostic hash of the
// payment's [PaymentInfo] ([SignAuthCapture]; [PaymentInfo.PayerAgnosticHash]
// and the escrow's own [PaymentInfo.Hash]). When the offer names a receiver
// authorizer the salt commits to it ([BindSalt]) and the payload carries
// saltNonce. [AuthCaptureTerms.Verify] checks a payer's payload; the tests
// hold the hash, the payload and the signature, byte for byte, to vectors
// made by the official @x402/evm 2.27.0 auth-capture client.
//
// After the hold the server settles lifecycle payloads
// ([AuthCaptureLifecycle], payload.type "capture", "void", "refund"),
// each with its receiver authorizer's EIP-712 consent in the domain "x402
// Auth Capture Operator" of the operator ([AuthCaptureTerms.SignCapture],
// [AuthCaptureTerms.SignVoid], [AuthCaptureTerms.SignRefund]); a capture
// and a refund name the escrow balances they expect, which makes each
// consent single-use. [Escrow] emulates the escrow offline as the
// "delegated" operator. Supported now: the escrow flow, the "delegated"
// operator with a receiver authorizer, 65-byte ECDSA signatures. Not yet:
// the "authorization" flow (charge), the "custom" and "policy" operators,
// contract-wallet signatures (ERC-1271, ERC-6492), a facilitator that
// sends transactions.
//
// # Offline facilitator
//
// [Facilitator] accepts test networks only by default ([TestNetworks]),
// checks no balances and sends no transactions: any payer with a valid
// signature pays. It accepts an authorized value at least the price (the
// version 1 rule; the version 2 SDK asks for equality) and reports the
// protocol's reasons for rejections ([ReasonSignature] and the others). Its
// transaction hashes are made up, derived from the authorization.
//
// # Demonstration prices
//
// [USDC] builds an offer in USDC (6 decimals) from a price in dollars,
// such as "$0.001" on Base Sepolia (asset
// 0x036CbD53842c5426634e7929541eC2318f3dCF7e, domain "USDC" version "2").
// Official x402 clients pay such offers with their defaults: the fetch
// client of version 1 caps a payment at 0.10 USDC.
package evm
