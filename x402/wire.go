package x402

import (
	"encoding/json"
	"fmt"
)

// The protocol versions this package speaks.
const (
	Version1 = 1 // terms in the 402 body, proof in X-PAYMENT
	Version2 = 2 // terms in PAYMENT-REQUIRED, proof in PAYMENT-SIGNATURE
)

// The HTTP headers of the protocol. Header names are case-insensitive on
// the wire; these are the spellings of the published transport specs.
const (
	// HeaderPaymentRequired carries the terms of a version 2 402 answer.
	HeaderPaymentRequired = "PAYMENT-REQUIRED"
	// HeaderPaymentSignature carries a version 2 payment proof.
	HeaderPaymentSignature = "PAYMENT-SIGNATURE"
	// HeaderPaymentResponse carries the settlement of a version 2 payment.
	HeaderPaymentResponse = "PAYMENT-RESPONSE"
	// HeaderXPayment carries a version 1 payment proof.
	HeaderXPayment = "X-PAYMENT"
	// HeaderXPaymentResponse carries the settlement of a version 1 payment.
	HeaderXPaymentResponse = "X-PAYMENT-RESPONSE"
)

// SchemeExact is the scheme that transfers exactly the stated amount.
const SchemeExact = "exact"

// ResourceInfo describes the resource a payment is for.
type ResourceInfo struct {
	// URL is the address of the protected resource.
	URL string `json:"url"`
	// Description tells a person what the payment buys.
	Description string `json:"description,omitempty"`
	// MimeType is the media type of the paid response.
	MimeType string `json:"mimeType,omitempty"`
}

// PaymentRequirements is one way to pay for a resource (an "offer"), in
// the shape of version 2. Terms of version 1 convert to it with
// [PaymentRequirementsV1.V2]; Network then keeps its version 1 name, since
// the Go values carry what the wire carries ([NetworkCAIP2] normalizes).
type PaymentRequirements struct {
	// Scheme is the payment scheme, such as "exact".
	Scheme string `json:"scheme"`
	// Network is the network id: CAIP-2 in version 2 ("eip155:84532"), a
	// name in version 1 ("base-sepolia").
	Network string `json:"network"`
	// Amount is the price in atomic units of Asset, as a decimal string.
	Amount string `json:"amount"`
	// Asset is the token contract address (or an ISO 4217 code).
	Asset string `json:"asset"`
	// PayTo is the address that receives the payment.
	PayTo string `json:"payTo"`
	// MaxTimeoutSeconds is how long the payer has to complete the payment.
	MaxTimeoutSeconds int `json:"maxTimeoutSeconds"`
	// Extra holds scheme-specific data; for "exact" on EVM networks the
	// token's EIP-712 domain "name" and "version".
	Extra map[string]any `json:"extra,omitempty"`
}

// ExtraString returns the string member key of Extra, or "".
func (r PaymentRequirements) ExtraString(key string) string {
	s, _ := r.Extra[key].(string)
	return s
}

// V1 returns r in the shape of version 1, describing the resource res.
// A network with a known version 1 name is renamed to it.
func (r PaymentRequirements) V1(res ResourceInfo) PaymentRequirementsV1 {
	network := r.Network
	if n, ok := NetworkV1(network); ok {
		network = n
	}
	return PaymentRequirementsV1{
		Scheme:            r.Scheme,
		Network:           network,
		MaxAmountRequired: r.Amount,
		Asset:             r.Asset,
		PayTo:             r.PayTo,
		Resource:          res.URL,
		Description:       res.Description,
		MimeType:          res.MimeType,
		MaxTimeoutSeconds: r.MaxTimeoutSeconds,
		Extra:             r.Extra,
	}
}

// PaymentRequirementsV1 is one way to pay, in the shape of version 1.
type PaymentRequirementsV1 struct {
	// Scheme is the payment scheme, such as "exact".
	Scheme string `json:"scheme"`
	// Network is the version 1 network name, such as "base-sepolia".
	Network string `json:"network"`
	// MaxAmountRequired is the price in atomic units of Asset.
	MaxAmountRequired string `json:"maxAmountRequired"`
	// Asset is the token contract address.
	Asset string `json:"asset"`
	// PayTo is the address that receives the payment.
	PayTo string `json:"payTo"`
	// Resource is the URL of the protected resource.
	Resource string `json:"resource"`
	// Description tells a person what the payment buys.
	Description string `json:"description"`
	// MimeType is the media type of the paid response.
	MimeType string `json:"mimeType,omitempty"`
	// OutputSchema is a JSON schema of the response, if the server gives one.
	OutputSchema json.RawMessage `json:"outputSchema,omitempty"`
	// MaxTimeoutSeconds is how long the payer has to complete the payment.
	MaxTimeoutSeconds int `json:"maxTimeoutSeconds"`
	// Extra holds scheme-specific data, as in [PaymentRequirements].
	Extra map[string]any `json:"extra,omitempty"`
}

// V2 returns r in the shape of version 2. The network name is kept.
func (r PaymentRequirementsV1) V2() PaymentRequirements {
	return PaymentRequirements{
		Scheme:            r.Scheme,
		Network:           r.Network,
		Amount:            r.MaxAmountRequired,
		Asset:             r.Asset,
		PayTo:             r.PayTo,
		MaxTimeoutSeconds: r.MaxTimeoutSeconds,
		Extra:             r.Extra,
	}
}

// PaymentRequired is the terms of a 402 answer in the shape of version 2:
// the value of the PAYMENT-REQUIRED header. [ReadPaymentRequired] also
// returns version 1 terms in this shape, with X402Version 1.
type PaymentRequired struct {
	// X402Version is the protocol version of the terms.
	X402Version int `json:"x402Version"`
	// Error says why payment is required (or why a payment failed).
	Error string `json:"error,omitempty"`
	// Resource describes what is for sale.
	Resource *ResourceInfo `json:"resource,omitempty"`
	// Accepts lists the ways to pay, in the server's order of preference.
	Accepts []PaymentRequirements `json:"accepts"`
	// Extensions maps extension ids to their data ({"info":...,"schema":...});
	// a payer echoes them in its payload.
	Extensions map[string]json.RawMessage `json:"extensions,omitempty"`
}

// PaymentRequiredV1 is the terms of a 402 answer in the shape of version 1:
// the JSON body of the answer.
type PaymentRequiredV1 struct {
	// X402Version is 1.
	X402Version int `json:"x402Version"`
	// Error says why payment is required (or why a payment failed).
	Error string `json:"error"`
	// Accepts lists the ways to pay, in the server's order of preference.
	Accepts []PaymentRequirementsV1 `json:"accepts"`
}

// PaymentPayload is a payment proof: the value of the PAYMENT-SIGNATURE
// (version 2) or X-PAYMENT (version 1) header. One Go type serves both
// versions; its JSON form follows X402Version. In version 1 only
// Accepted.Scheme and Accepted.Network travel (as top-level "scheme" and
// "network"), and Resource and Extensions do not travel at all.
type PaymentPayload struct {
	// X402Version is the protocol version of the proof.
	X402Version int
	// Resource describes the resource paid for (version 2). A server fills
	// it for version 1 proofs so that a facilitator sees the resource.
	Resource *ResourceInfo
	// Accepted is the offer the payer chose.
	Accepted PaymentRequirements
	// Payload is the scheme-specific proof, such as a signed EIP-3009
	// authorization for "exact" on EVM networks.
	Payload json.RawMessage
	// Extensions echoes the extensions of the terms, with the payer's
	// additions (version 2).
	Extensions map[string]json.RawMessage
}

type payloadV1 struct {
	X402Version int             `json:"x402Version"`
	Scheme      string          `json:"scheme"`
	Network     string          `json:"network"`
	Payload     json.RawMessage `json:"payload"`
}

type payloadV2 struct {
	X402Version int                        `json:"x402Version"`
	Resource    *ResourceInfo              `json:"resource,omitempty"`
	Accepted    *PaymentRequirements       `json:"accepted"`
	Payload     json.RawMessage            `json:"payload"`
	Extensions  map[string]json.RawMessage `json:"extensions,omitempty"`
	// version 1 members, read only to detect a payload without a version
	Scheme  string `json:"scheme,omitempty"`
	Network string `json:"network,omitempty"`
}

// MarshalJSON writes p in the shape of its X402Version.
func (p PaymentPayload) MarshalJSON() ([]byte, error) {
	switch p.X402Version {
	case Version1:
		return json.Marshal(payloadV1{X402Version: 1, Scheme: p.Accepted.Scheme, Network: p.Accepted.Network, Payload: p.Payload})
	case Version2:
		acc := p.Accepted
		return json.Marshal(payloadV2{X402Version: 2, Resource: p.Resource, Accepted: &acc, Payload: p.Payload, Extensions: p.Extensions})
	default:
		return nil, fmt.Errorf("x402: cannot encode a payment payload of x402Version %d", p.X402Version)
	}
}

// UnmarshalJSON reads a payload of either version.
func (p *PaymentPayload) UnmarshalJSON(data []byte) error {
	var w payloadV2
	if err := json.Unmarshal(data, &w); err != nil {
		return err
	}
	*p = PaymentPayload{X402Version: w.X402Version, Resource: w.Resource, Payload: w.Payload, Extensions: w.Extensions}
	if w.Accepted != nil {
		p.Accepted = *w.Accepted
	}
	switch {
	case w.X402Version == Version1:
		p.Accepted = PaymentRequirements{Scheme: w.Scheme, Network: w.Network}
		p.Resource, p.Extensions = nil, nil
	case w.X402Version != Version2 && w.Accepted == nil:
		// A proof of no version has the members of the version 1 shape
		// that it sends, so that its errors name what it lacks.
		p.Accepted = PaymentRequirements{Scheme: w.Scheme, Network: w.Network}
	}
	return nil
}

// SettleResponse is the outcome of a settlement: the value of the
// PAYMENT-RESPONSE and X-PAYMENT-RESPONSE headers, and the answer of a
// facilitator's POST /settle.
type SettleResponse struct {
	// Success reports whether the payment was settled.
	Success bool `json:"success"`
	// ErrorReason is a machine-readable reason when Success is false.
	ErrorReason string `json:"errorReason,omitempty"`
	// ErrorMessage explains ErrorReason to a person.
	ErrorMessage string `json:"errorMessage,omitempty"`
	// Payer is the address that paid.
	Payer string `json:"payer,omitempty"`
	// Transaction is the transaction hash, "" when settlement failed.
	Transaction string `json:"transaction"`
	// Network is the network the payment settled on.
	Network string `json:"network"`
	// Amount is the amount settled in atomic units, when reported.
	Amount string `json:"amount,omitempty"`
	// Extensions carries extension data of the settlement.
	Extensions map[string]json.RawMessage `json:"extensions,omitempty"`
}

// VerifyResponse is the answer of a facilitator's POST /verify.
type VerifyResponse struct {
	// IsValid reports whether the payment would settle.
	IsValid bool `json:"isValid"`
	// InvalidReason is a machine-readable reason when IsValid is false,
	// such as "invalid_exact_evm_payload_signature".
	InvalidReason string `json:"invalidReason,omitempty"`
	// InvalidMessage explains InvalidReason to a person.
	InvalidMessage string `json:"invalidMessage,omitempty"`
	// Payer is the address that signed the payment.
	Payer string `json:"payer,omitempty"`
}

// SupportedKind is one (version, scheme, network) a facilitator handles.
type SupportedKind struct {
	// X402Version is the protocol version.
	X402Version int `json:"x402Version"`
	// Scheme is the payment scheme.
	Scheme string `json:"scheme"`
	// Network is the network id in the naming of X402Version.
	Network string `json:"network"`
	// Extra holds scheme-specific configuration.
	Extra map[string]any `json:"extra,omitempty"`
}

// SupportedResponse is the answer of a facilitator's GET /supported.
type SupportedResponse struct {
	// Kinds lists what the facilitator can verify and settle.
	Kinds []SupportedKind `json:"kinds"`
	// Extensions lists the extension ids the facilitator implements.
	Extensions []string `json:"extensions"`
	// Signers maps CAIP-2 patterns ("eip155:*") to the facilitator's
	// signing addresses.
	Signers map[string][]string `json:"signers"`
}
