package x402

import (
	"errors"
	"fmt"
)

// Errors of the package. Errors returned by [Transport] reach the caller of
// http.Client.Do inside a *url.Error, and errors.Is still finds them.
var (
	// ErrBudgetExceeded: paying would take the Transport's Budget below zero.
	ErrBudgetExceeded = errors.New("x402: budget exceeded")
	// ErrNoAcceptableOffer: no offer of the terms is allowed by the Policy
	// or payable by the Payer.
	ErrNoAcceptableOffer = errors.New("x402: no acceptable offer")
	// ErrAmountAboveLimit: an offer asks for more than the Policy's most
	// per call (for "upto", the maximum it would authorize). Errors
	// wrapping it also wrap ErrNoAcceptableOffer.
	ErrAmountAboveLimit = errors.New("x402: amount above the policy's limit per call")
	// ErrRedirectedPayment: a 402 reached through a redirect that the
	// Transport does not pay: it came from another origin (scheme or host)
	// than the one the caller's request went to, or a request before it
	// in the redirect chain was paid already.
	ErrRedirectedPayment = errors.New("x402: payment asked after a redirect")
	// ErrPaymentRejected: the server answered 402 again to a request that
	// carried a payment proof.
	ErrPaymentRejected = errors.New("x402: payment rejected")
	// ErrPaymentPending: the server answered 402 to a request that carried
	// an "auth-capture" proof whose hold still stands (its capture went
	// unanswered, and may still happen): the server keeps the answer the
	// capture buys, and the same call sent again with the same proof gets
	// it once captured. It is not [Permanent], and errors wrapping it do
	// not wrap ErrPaymentRejected. A capture the facilitator refused for
	// good will not happen, and is ErrPaymentRejected.
	ErrPaymentPending = errors.New("x402: payment pending: send the call again with the same payment")
	// ErrInvalidHeader: a header value is not base64 of the expected JSON.
	ErrInvalidHeader = errors.New("x402: invalid header")
	// ErrInvalidTerms: a 402 answer carries terms that cannot be read.
	ErrInvalidTerms = errors.New("x402: invalid payment terms")
	// ErrNoSettlement: a response carries no settlement header.
	ErrNoSettlement = errors.New("x402: no settlement in response")
	// ErrInvalidAmount: an amount or price is not a non-negative decimal
	// that fits the units asked for.
	ErrInvalidAmount = errors.New("x402: invalid amount")
	// ErrUnsupportedVersion: an x402Version other than 1 or 2.
	ErrUnsupportedVersion = errors.New("x402: unsupported x402Version")
	// ErrReplayStoreFull: a MemoryReplay holds as many unexpired keys as
	// it may, and takes no new one until some expire.
	ErrReplayStoreFull = errors.New("x402: replay store full")
	// ErrBeyondRetention: a MemoryReplay was asked to keep a key longer
	// than its MaxRetention.
	ErrBeyondRetention = errors.New("x402: key to be kept beyond the store's retention")
)

// PaymentError reports a payment that left the process (its proof was sent)
// but did not end in a paid response: the server rejected it, or the retry
// failed in transit, for instance because the context was cancelled. The
// caller cannot know from the client side whether the payment settled, so
// the error carries what identifies it.
type PaymentError struct {
	// ID is the payment id of the logical call (see [Transport]).
	ID string
	// Reference identifies the payment on its network, as the [Payer]
	// reported it (for "exact" on EVM: payer address and nonce).
	Reference string
	// Offer is the offer that was paid.
	Offer PaymentRequirements
	// X402Version is the protocol version of the proof.
	X402Version int
	// Reason is the server's explanation, from the terms' "error" member
	// or the settlement's errorReason, when there is one.
	Reason string
	// Settlement is the settlement the server reported, if any.
	Settlement *SettleResponse
	// Err is the cause: ErrPaymentRejected, ErrPaymentPending, or the
	// transport error.
	Err error
}

// Error describes the failure and names the payment.
func (e *PaymentError) Error() string {
	s := fmt.Sprintf("x402: payment %s (ref %s, %s %s on %s): %v", e.ID, e.Reference, e.Offer.Amount, e.Offer.Asset, e.Offer.Network, e.Err)
	if e.Reason != "" {
		s += ": " + e.Reason
	}
	return s
}

// Unwrap returns the cause.
func (e *PaymentError) Unwrap() error { return e.Err }

// FacilitatorError reports a facilitator answer that is not a verify or
// settle result: a status other than 200, or a body that does not decode.
type FacilitatorError struct {
	// Op is the operation: "verify", "settle" or "supported".
	Op string
	// StatusCode is the HTTP status, 0 when no response arrived.
	StatusCode int
	// Body is the start of the response body, for diagnosis.
	Body string
	// Err is the cause.
	Err error
}

// Error describes the failure.
func (e *FacilitatorError) Error() string {
	if e.StatusCode == 0 {
		return fmt.Sprintf("x402: facilitator %s: %v", e.Op, e.Err)
	}
	return fmt.Sprintf("x402: facilitator %s: status %d: %v", e.Op, e.StatusCode, e.Err)
}

// Unwrap returns the cause.
func (e *FacilitatorError) Unwrap() error { return e.Err }

// Permanent reports whether err is a decision of [Transport] that repeating
// the request cannot change: budget exceeded, no acceptable offer, a
// rejected payment, unreadable terms, a payment asked after a redirect to
// another origin. An outer retry policy (for example a
// go-retryablehttp CheckRetry) should stop on it. Transport errors after a
// proof was sent are not permanent: retrying them reuses the same proof.
func Permanent(err error) bool {
	return errors.Is(err, ErrBudgetExceeded) || errors.Is(err, ErrNoAcceptableOffer) ||
		errors.Is(err, ErrPaymentRejected) || errors.Is(err, ErrInvalidTerms) ||
		errors.Is(err, ErrUnsupportedVersion) || errors.Is(err, ErrRedirectedPayment)
}
