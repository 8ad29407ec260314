// Package x402 implements pay-per-call HTTP with the public x402 protocol,
// for the client that pays and the server that is paid. It holds the wire
// types of versions 1 and 2, a client [Transport] that pays when a server
// answers 402, a server [Middleware] that asks for payment and has it
// verified and settled, and a [FacilitatorClient] for a facilitator's HTTP
// API. Signing and checking payments for EVM networks lives in the
// subpackage evm; this package knows no network's cryptography.
//
// # Wire
//
// Version 2 sends the terms in the PAYMENT-REQUIRED header of the 402
// answer, the proof in PAYMENT-SIGNATURE and the settlement in
// PAYMENT-RESPONSE. Version 1 sends the terms as the JSON body of the 402
// answer, the proof in X-PAYMENT and the settlement in X-PAYMENT-RESPONSE.
// Header values are standard base64, with padding, of compact JSON
// ([EncodeHeader]); the decoders also accept a value without padding and
// with surrounding spaces, as the official SDKs do. Version 2 names
// networks in CAIP-2 ("eip155:84532"), version 1 by name ("base-sepolia");
// [NetworkCAIP2], [NetworkV1] and [SameNetwork] map between them. The Go
// values carry what the wire carries: [PaymentRequirements] has the shape
// of version 2 and converts to and from [PaymentRequirementsV1];
// [PaymentPayload] is one type whose JSON follows its X402Version.
//
// # Client
//
// A [Transport] wraps any http.RoundTripper. On a 402 it reads the terms of
// either version, keeps the offers its [Payer] can pay, lets its
// SelectFunc choose one within its [Policy] (schemes, networks, assets,
// most per call) and its [Budget] (a total shared by concurrent calls),
// and sends the request once more with the proof. It never pays twice for
// one logical call: a call named by [WithPaymentKey] or an Idempotency-Key
// header reuses its proof when it is repeated, which makes a
// go-retryablehttp Client above the Transport safe:
//
//	t := &x402.Transport{Payer: payer, Policy: x402.Policy{Networks: []string{"base-sepolia"}}}
//	rc := retryablehttp.NewClient()
//	rc.HTTPClient.Transport = t
//	rc.CheckRetry = func(ctx context.Context, resp *http.Response, err error) (bool, error) {
//		if x402.Permanent(err) {
//			return false, err
//		}
//		return retryablehttp.DefaultRetryPolicy(ctx, resp, err)
//	}
//	req, _ := retryablehttp.NewRequestWithContext(ctx, "POST", url, body)
//	req.Header.Set(x402.HeaderIdempotencyKey, key) // one key per logical call
//
// [SettlementFromResponse] decodes the settlement of a paid answer.
//
// # Server
//
// [Middleware] prices routes (http.ServeMux patterns, or a function),
// answers 402 with the terms of both versions at once (the version 2
// header and a version 1 body), so that clients of either version can pay,
// accepts a proof in either header, verifies it through a [Facilitator],
// runs the handler into a buffer within the route's time budget and
// settles only when the handler succeeded (or, for a route that chooses
// Price.SettleBefore, settles first and then runs the handler). A [ReplayStore] makes sure one authorization pays for one
// request; [MemoryReplay] serves one process, and a database can implement
// the interface for several. [NewFacilitatorHandler] serves any
// Facilitator over HTTP, such as the offline one of package evm.
//
// # Decisions where the protocol is silent
//
//   - The default most per call is [DefaultMaxAmount], 100000 atomic
//     units (0.10 USDC), the default of the official x402 fetch client;
//     the version 2 SDKs have no default cap, and vouch keeps one. Demo
//     prices stay well below it (evm.USDC builds offers such as "$0.001").
//   - The zero [Policy] pays only on test networks, only in their USDC
//     ([KnownAsset]), and only for offers whose maxTimeoutSeconds is at
//     most ten minutes ([DefaultMaxTimeoutSeconds]); the official clients
//     pay on their wallet's network in any asset and sign for as long as
//     the offer asks. A host lists mainnets and assets to pay there.
//   - The budget is charged when a proof is made and refunded only when
//     the proof never left the process, since a sent proof may settle.
//   - A 402 answer to a paid request is an error ([ErrPaymentRejected]),
//     never a second payment; one whose "auth-capture" hold still stands,
//     its capture to come, is [ErrPaymentPending], which a retry with the
//     call's key (the same proof) completes. A proof is remembered until
//     its authorization expires (validBefore), or an "auth-capture" one
//     until its capture deadline when later, as long as a server can
//     take it; a repeated call after that pays anew.
//   - An answer is never charged twice: a payment whose request the
//     handler answers from its idempotency store (Idempotent-Replayed:
//     true) is verified only, never settled, and its proof released
//     unspent. The server keeps answers (24 hours by default) longer than
//     the Transport keeps a proof (at most the Policy's
//     MaxTimeoutSeconds, ten minutes by default), so a retry that comes
//     with a new proof within that window gets the answer for free. An
//     answer is kept only once its payment settled ([AfterSettle]): the
//     retry of a call whose settlement failed, or whose answer a gate
//     refused, is a new purchase. (On a gated route the Middleware keeps
//     the answer itself, before settling, and a retry with the same proof
//     settles a failed settlement and gets it; the handler's store does
//     not learn of it, so a later retry with a new proof buys it again:
//     see [DeliveryGate].)
//   - The server remembers a proof as long as it can pay, and so accepts
//     none valid for longer than MiddlewareConfig.MaxValidity (one hour
//     by default, "authorization_validity_too_long"); the official
//     clients sign for the offer's maxTimeoutSeconds. The memory stores
//     are bounded in time and size whatever a payer signs.
//   - When the terms offer the payment-identifier extension, the payer
//     echoes it with an id derived from the call's key.
//   - An answer that was paid for and lost on the way is delivered again,
//     never paid again: a repeat of a settled proof with the same method,
//     path and Idempotency-Key, from the same caller with the same body,
//     gets the answer its first use bought, with the first settlement in
//     PAYMENT-RESPONSE, when the handler is a [Replayer] that kept it
//     (the vouch servers are). The [ReplayStore] records the settlement
//     with the proof (MarkSettled) before the answer is sent; nothing
//     settles again and the handler's work does not run again. Any other
//     repeat of a proof, such as one whose settlement failed or whose
//     first use still runs, gets 402 "already used" and no answer (a
//     proof whose handler failed was released, and is taken as new).
//   - The exact and upto schemes move money before anything records that
//     they did: a server that dies after the facilitator settled and
//     before both records are written (the settlement by MarkSettled,
//     then the answer by the handler's store, a few milliseconds) leaves
//     the payer charged, and the retry gets 402 "already used": settling
//     again proves nothing, since a used nonce does not prove a transfer
//     (the payer may have cancelled the authorization). A route that must
//     survive that takes escrow (the auth-capture scheme, below), which
//     keeps the answer it buys before it captures.
//   - A failed settlement keeps the authorization marked as used, because
//     its outcome on chain is unknown; a handler failure (status 400 or
//     more) or a failed verification releases it, so that the client may
//     repeat the call with the same proof.
//   - An invalid proof header is a 400 problem (RFC 9457), naming a member
//     as the proof's version writes it (version 1's scheme, version 2's
//     accepted.scheme; a proof of no version as its header's version); a
//     proof header sent empty, more than once, or beside the other
//     version's is a 400 too, not a request without a proof. An unreachable
//     facilitator or replay store is a 503 problem, which clients retry
//     with the same proof. A priced request whose Idempotency-Key is sent
//     empty, more than once or not as 1 to 255 visible ASCII characters
//     is a 400 problem before its payment is looked at, since a proof is
//     bound to its request's one key.
//   - Authorizations of the exact EVM scheme are named for replay by
//     network, asset, payer and nonce, and held until their validBefore.
//
// # Usage-based prices: the upto scheme
//
// An offer of scheme [SchemeUpto] asks the payer to authorize at most its
// amount; the server settles what the call used. A Transport pays such an
// offer only when its Policy lists "upto", and never when the maximum is
// above Policy.MaxAmount (an error wrapping [ErrAmountAboveLimit]); its
// Budget is charged the maximum. Behind the Middleware, the handler of an
// "upto" route tells what it used with [ReportUsage] (never above the
// authorized maximum; a handler that reports nothing is settled for the
// maximum, as the official servers do), the payment settles that amount,
// and the payment response reports the usage in the extension
// [ExtensionUsage] ([UsageFromSettlement]).
//
// # Escrow: the auth-capture scheme
//
// An offer of scheme [SchemeAuthCapture] holds the payment in escrow: the
// payer's one signature lets a facilitator place a hold of the offer's
// amount (authorize); the server then captures part or all of it, voids
// the rest, and may refund what it captured until the refund deadline,
// each operation a settle whose payload.type names it, with the server's
// consent; after the capture deadline the payer can reclaim a hold. A
// Transport pays such an offer only when its Policy lists
// "auth-capture"; MaxAmount and the Budget apply to the amount held.
// [FacilitatorClient] relays the hold and the later settles as it relays
// any other. Package evm has the EVM binding: the wire, the PaymentInfo
// hash, the signatures and an offline escrow.
//
// The Middleware offers "auth-capture" on a route whose Price lists such
// an offer, with MiddlewareConfig.Escrow: each 402 answer sets the
// offer's captureDeadline (now plus [EscrowConfig].CaptureWindow, ten
// minutes by default) and refundDeadline; a verified payment is held
// (the facilitator's first settle) and the hold recorded in the
// [EscrowLedger] before the handler runs, so no work runs on a payment
// that is not held (the scheme's security note 4). After the handler,
// an answer delivered (status below 400, passed by the route's
// [DeliveryGate] if any, not from the idempotency store) is captured,
// for what the handler reported with [ReportUsage] or else the whole
// hold, the rest voided in the same settle; any other answer, a panic
// included, voids the hold. The verdict is recorded before the capture
// or void, and each operation's first outcome after it: a retry replays
// the kept outcome and sends nothing again (security note 5), and a
// capture never exceeds the hold. A capture whose outcome the
// facilitator did not give may still happen (Recovery, below, sends it
// again), so its answer is kept: the retry of the same request
// completes the capture and gets the answer once it is captured, up to
// the capture deadline (even in its last minute, when the deadline
// leaves no room for new work and a new payment is refused). The
// answer is kept so before the capture is sent, and its outcome once
// the capture is answered. The payment response reports the
// lifecycle ([ExtensionEscrow]). The capture window is bounded by
// MaxValidity: a hold is finished within the time the server remembers
// its proof; the ledger keeps the payment until its refund deadline.
//
// # Escrow that survives a restart, and disputes
//
// A durable [EscrowLedger] (package x402/boltstore for one process,
// pgstore for servers sharing a database) keeps each payment's hold,
// verdict and operations, so that a server that dies between a hold and
// its capture or void leaves the payment to be finished (with the
// answers of its captures in a durable [OutcomeStore], pgstore's, for
// their retries): a server runs
// the Finish of package x402/escrow's Recovery (escrow.NewRecovery builds
// it from the Middleware's configuration) before it serves, which
// captures or voids every held payment by its recorded verdict, voids one without a verdict
// once it is older than the route's work could be, and sends each
// operation once ([SettleEscrow]; servers recovering at once claim a
// payment first, escrow.Claimer).
//
// A captured answer that its caller later proves wrong can be refunded,
// before the refund deadline, only by a policy the seller configures
// (escrow.Disputes, escrow.RefundPolicy): never above what was
// captured, once per payment. Package trust/trustpay's Disputes records
// the payment of each paid trust call and takes the caller's outcome
// reports through the trust service's Feedback.
//
// # Settling on a check of the answer
//
// A route whose Price has a [DeliveryGate] runs the handler into a
// buffer, asks the gate's Check whether to deliver the answer, and
// settles only what it delivers; a refused answer is never settled, and
// a retry with the same proof gets the kept outcome. A delivered answer
// is kept before it is settled, and not settled unless kept; a retry of
// one whose settlement failed settles it and gets it. Package
// trust/trustpay provides a Check that validates the answer through a
// trust service.
//
// The Middleware reports OpenTelemetry spans of verify and settle and
// counts payments and refusals by reason (MiddlewareConfig's
// TracerProvider and MeterProvider; docs/OBSERVABILITY.md lists them).
// The Transport reports a span "x402.pay" for each request it pays for
// or declines to pay, and counts them by result and reason (its
// TracerProvider and MeterProvider fields).
package x402
