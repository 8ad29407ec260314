package evm

import (
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
	"slices"

	"github.com/vouchkit/vouch/x402"
)

// The values of an "auth-capture" offer's extra that select among the
// scheme's variants (the EVM binding of the x402 auth-capture scheme,
// v1.1).
const (
	// PaymentFlowEscrow: the payer's authorization places a hold
	// (authorize), captured, voided or refunded later. The default.
	PaymentFlowEscrow = "escrow"
	// PaymentFlowAuthorization: the payer's authorization settles as a
	// terminal charge, refundable later.
	PaymentFlowAuthorization = "authorization"
	// OperatorDelegated: the facilitator is the escrow's operator
	// (extra.captureAuthorizer) and relays every operation. The default.
	OperatorDelegated = "delegated"
	// OperatorCustom: the operator is a contract with permissionless
	// collect entry points; the lifecycle runs out of band.
	OperatorCustom = "custom"
	// TransferEIP3009: the payer signs an ERC-3009
	// ReceiveWithAuthorization to the EIP-3009 token collector. The
	// default.
	TransferEIP3009 = "eip3009"
	// TransferPermit2: the payer signs a Permit2 PermitTransferFrom with
	// the Permit2 token collector as spender.
	TransferPermit2 = "permit2"
	// CaptureSync: the request's own settle after the handler captures or
	// voids. The default.
	CaptureSync = "sync"
	// CaptureDeferred: the server captures later from durable state.
	CaptureDeferred = "deferred"
)

// EscrowDeployment is one CREATE2 set of the commerce-payments contracts:
// the AuthCaptureEscrow and its token collectors. Its addresses are the
// same on every chain.
type EscrowDeployment struct {
	// Version is "v1.1" or "v1.0".
	Version string
	// Escrow is the AuthCaptureEscrow.
	Escrow Address
	// EIP3009Collector collects by ERC-3009 receiveWithAuthorization.
	EIP3009Collector Address
	// Permit2Collector collects by Permit2 permitTransferFrom.
	Permit2Collector Address
	// OperatorRefundCollector collects refund liquidity from the operator.
	OperatorRefundCollector Address
}

func mustAddress(s string) Address {
	a, err := ParseAddress(s)
	if err != nil {
		panic(err)
	}
	return a
}

// EscrowV1_1 returns the commerce-payments v1.1 deployment, the default of
// an "auth-capture" offer without extra.authCaptureEscrow.
func EscrowV1_1() EscrowDeployment {
	return EscrowDeployment{
		Version:                 "v1.1",
		Escrow:                  mustAddress("0xf96815976523E00e65Be8f34cA5e64b4f41EB19c"),
		EIP3009Collector:        mustAddress("0x8612dfdc421f80336cd14E8EF9cb1E765dB5ab88"),
		Permit2Collector:        mustAddress("0xD69831Aed5bfe262067ec4c751f4F830EcdD446e"),
		OperatorRefundCollector: mustAddress("0x7a03443724d14798c4AB4622F1DAAcA761Fea486"),
	}
}

// EscrowV1_0 returns the commerce-payments v1.0 deployment, which an offer
// selects with extra.authCaptureEscrow.
func EscrowV1_0() EscrowDeployment {
	return EscrowDeployment{
		Version:                 "v1.0",
		Escrow:                  mustAddress("0xBdEA0D1bcC5966192B070Fdf62aB4EF5b4420cff"),
		EIP3009Collector:        mustAddress("0x0E3dF9510de65469C4518D7843919c0b8C7A7757"),
		Permit2Collector:        mustAddress("0x992476B9Ee81d52a5BdA0622C333938D0Af0aB26"),
		OperatorRefundCollector: mustAddress("0x934907bffd0901b6A21e398B9C53A4A38F02fa5d"),
	}
}

// AuthCaptureExtra is the extra of an "auth-capture" offer on an EVM
// network, as the wire carries it. Addresses are hex strings; deadlines
// are Unix seconds and fee bounds basis points, both JSON numbers.
type AuthCaptureExtra struct {
	// Name and Version are the token's EIP-712 domain (ERC-3009 only).
	Name    string `json:"name"`
	Version string `json:"version"`
	// AuthCaptureEscrow selects the deployment; "" means v1.1.
	AuthCaptureEscrow string `json:"authCaptureEscrow,omitempty"`
	// CaptureAuthorizer is the escrow's operator (PaymentInfo.operator).
	CaptureAuthorizer string `json:"captureAuthorizer"`
	// OperatorType is "delegated" (the default when "") or "custom".
	OperatorType string `json:"operatorType,omitempty"`
	// ReceiverAuthorizer signs the server's consent to charge, capture,
	// void and refund; non-zero binds the salt to it.
	ReceiverAuthorizer string `json:"receiverAuthorizer,omitempty"`
	// Policy is reserved for the "policy" operator type; it must be zero.
	Policy string `json:"policy,omitempty"`
	// PaymentFlow is "escrow" (the default when "") or "authorization".
	PaymentFlow string `json:"paymentFlow,omitempty"`
	// CaptureMode is "sync" (the default when "") or "deferred".
	CaptureMode string `json:"captureMode,omitempty"`
	// CaptureDeadline is the last moment a hold can be captured
	// (PaymentInfo.authorizationExpiry), and when the payer may reclaim.
	CaptureDeadline uint64 `json:"captureDeadline"`
	// RefundDeadline is the last moment a capture can be refunded
	// (PaymentInfo.refundExpiry).
	RefundDeadline uint64 `json:"refundDeadline"`
	// FeeRecipient receives the fee (PaymentInfo.feeReceiver).
	FeeRecipient string `json:"feeRecipient"`
	// MinFeeBps and MaxFeeBps bound the fee of each capture.
	MinFeeBps uint16 `json:"minFeeBps"`
	MaxFeeBps uint16 `json:"maxFeeBps"`
	// AssetTransferMethod is "eip3009" (the default when "") or "permit2".
	AssetTransferMethod string `json:"assetTransferMethod,omitempty"`
}

// Map returns e as an offer's Extra.
func (e AuthCaptureExtra) Map() map[string]any {
	b, _ := json.Marshal(e) // strings and numbers only
	var m map[string]any
	_ = json.Unmarshal(b, &m)
	return m
}

// ErrAutoCapture is the error of an offer whose extra has the removed
// autoCapture: true of the scheme's v1.0; v1.1 writes paymentFlow
// "authorization" for it.
var ErrAutoCapture = errors.New(`evm: extra.autoCapture true was removed from the auth-capture scheme; write extra.paymentFlow "authorization"`)

// AuthCaptureTerms is an "auth-capture" offer on an EVM network, checked
// and resolved: what a payer signs against and a facilitator verifies.
type AuthCaptureTerms struct {
	// ChainID is the chain of the offer's network.
	ChainID uint64
	// Deployment is the resolved commerce-payments deployment.
	Deployment EscrowDeployment
	// Token is the offer's asset and Receiver its payTo.
	Token, Receiver Address
	// MaxAmount is the offer's amount, the most the payer authorizes.
	MaxAmount *big.Int
	// MaxTimeoutSeconds is how long the payer's authorization is valid.
	MaxTimeoutSeconds int
	// Extra is the offer's extra, with every default written out.
	Extra AuthCaptureExtra
	// Operator, ReceiverAuthorizer, Policy and FeeRecipient are the
	// addresses of Extra, zero when absent.
	Operator, ReceiverAuthorizer, Policy, FeeRecipient Address
}

// Bound reports whether the payment's salt commits to the receiver
// authorizer and policy (either is non-zero): the payload then carries
// saltNonce beside salt.
func (t AuthCaptureTerms) Bound() bool {
	return t.ReceiverAuthorizer != (Address{}) || t.Policy != (Address{})
}

// Relayed reports whether a facilitator relays the lifecycle (capture,
// void, refund) of the terms' payments: a "delegated" operator with a
// non-zero receiver authorizer.
func (t AuthCaptureTerms) Relayed() bool {
	return t.Extra.OperatorType == OperatorDelegated && t.ReceiverAuthorizer != (Address{})
}

// maxUint48 bounds the escrow's expiries, maxUint120 its amounts.
var (
	maxUint48  = uint64(1)<<48 - 1
	maxUint120 = new(big.Int).Sub(new(big.Int).Lsh(big.NewInt(1), 120), big.NewInt(1))
)

// ParseAuthCaptureOffer checks an "auth-capture" offer and resolves its
// terms. Errors name the member at fault ("extra.captureDeadline"). Keys
// of extra it does not know are ignored, as the scheme asks of clients.
// It checks no time: deadlines against the clock are the verifier's.
func ParseAuthCaptureOffer(offer x402.PaymentRequirements) (AuthCaptureTerms, error) {
	var t AuthCaptureTerms
	if offer.Scheme != x402.SchemeAuthCapture {
		return t, fmt.Errorf("evm: scheme %q is not %q", offer.Scheme, x402.SchemeAuthCapture)
	}
	chain, ok := x402.EVMChainID(offer.Network)
	if !ok {
		return t, fmt.Errorf("evm: network %q is not a known EVM network", offer.Network)
	}
	t.ChainID = chain
	var err error
	if t.Token, err = ParseAddress(offer.Asset); err != nil {
		return t, fmt.Errorf("evm: asset: %w", err)
	}
	if t.Receiver, err = ParseAddress(offer.PayTo); err != nil {
		return t, fmt.Errorf("evm: payTo: %w", err)
	}
	if t.MaxAmount, err = parseBig(offer.Amount); err != nil {
		return t, fmt.Errorf("evm: amount: %w", err)
	}
	if t.MaxAmount.Sign() <= 0 || t.MaxAmount.Cmp(maxUint120) > 0 {
		return t, fmt.Errorf("evm: amount %s is not above zero and within uint120", offer.Amount)
	}
	if offer.MaxTimeoutSeconds <= 0 {
		return t, errors.New("evm: maxTimeoutSeconds must be above zero: it fixes PaymentInfo.preApprovalExpiry")
	}
	t.MaxTimeoutSeconds = offer.MaxTimeoutSeconds
	if t.Extra, err = decodeExtra(offer.Extra); err != nil {
		return t, err
	}
	if offer.Extra["autoCapture"] == true {
		// Scheme v1.0's terminal charge, which v1.1 names paymentFlow
		// "authorization": settling a hold instead would be another
		// outcome on chain.
		return t, ErrAutoCapture
	}
	e := &t.Extra
	if e.Name == "" || e.Version == "" {
		return t, errors.New("evm: extra.name and extra.version, the token's EIP-712 domain, are required")
	}
	switch e.AuthCaptureEscrow {
	case "":
		t.Deployment = EscrowV1_1()
	default:
		a, err := ParseAddress(e.AuthCaptureEscrow)
		switch {
		case err != nil:
			return t, fmt.Errorf("evm: extra.authCaptureEscrow: %w", err)
		case a == EscrowV1_1().Escrow:
			t.Deployment = EscrowV1_1()
		case a == EscrowV1_0().Escrow:
			t.Deployment = EscrowV1_0()
		default:
			return t, fmt.Errorf("evm: extra.authCaptureEscrow %s is neither the v1.1 nor the v1.0 AuthCaptureEscrow", a)
		}
	}
	for _, f := range []struct {
		name     string
		s        string
		dst      *Address
		required bool
	}{
		{"captureAuthorizer", e.CaptureAuthorizer, &t.Operator, true},
		{"feeRecipient", e.FeeRecipient, &t.FeeRecipient, true},
		{"receiverAuthorizer", e.ReceiverAuthorizer, &t.ReceiverAuthorizer, false},
		{"policy", e.Policy, &t.Policy, false},
	} {
		if f.s == "" {
			if f.required {
				return t, fmt.Errorf("evm: extra.%s is required", f.name)
			}
			continue
		}
		if *f.dst, err = ParseAddress(f.s); err != nil {
			return t, fmt.Errorf("evm: extra.%s: %w", f.name, err)
		}
	}
	if t.Operator == (Address{}) {
		return t, errors.New("evm: extra.captureAuthorizer is the zero address")
	}
	defaults := []struct {
		name    string
		v       *string
		def     string
		allowed []string
	}{
		{"operatorType", &e.OperatorType, OperatorDelegated, []string{OperatorDelegated, OperatorCustom}},
		{"paymentFlow", &e.PaymentFlow, PaymentFlowEscrow, []string{PaymentFlowEscrow, PaymentFlowAuthorization}},
		{"assetTransferMethod", &e.AssetTransferMethod, TransferEIP3009, []string{TransferEIP3009, TransferPermit2}},
	}
	for _, d := range defaults {
		if *d.v == "" {
			*d.v = d.def
		}
		if !slices.Contains(d.allowed, *d.v) {
			return t, fmt.Errorf("evm: extra.%s %q is not one of %q", d.name, *d.v, d.allowed)
		}
	}
	switch {
	case e.PaymentFlow == PaymentFlowAuthorization && e.CaptureMode != "":
		return t, errors.New("evm: extra.captureMode must be absent when extra.paymentFlow is \"authorization\"")
	case e.PaymentFlow == PaymentFlowEscrow && e.CaptureMode == "":
		e.CaptureMode = CaptureSync
	}
	if e.PaymentFlow == PaymentFlowEscrow && e.CaptureMode != CaptureSync && e.CaptureMode != CaptureDeferred {
		return t, fmt.Errorf("evm: extra.captureMode %q is not \"sync\" or \"deferred\"", e.CaptureMode)
	}
	if t.Policy != (Address{}) {
		return t, fmt.Errorf("evm: extra.policy must be absent or zero for operator type %q", e.OperatorType)
	}
	if e.CaptureMode == CaptureSync && !t.Relayed() {
		return t, errors.New("evm: extra.captureMode \"sync\" needs a relayed lifecycle (a \"delegated\" operator with a non-zero extra.receiverAuthorizer); write \"deferred\"")
	}
	if e.PaymentFlow == PaymentFlowAuthorization && t.ReceiverAuthorizer == (Address{}) {
		return t, errors.New("evm: extra.paymentFlow \"authorization\" needs a non-zero extra.receiverAuthorizer, who signs the charge")
	}
	switch {
	case e.CaptureDeadline == 0 || e.CaptureDeadline > maxUint48:
		return t, fmt.Errorf("evm: extra.captureDeadline %d is not a uint48 above zero", e.CaptureDeadline)
	case e.RefundDeadline > maxUint48:
		return t, fmt.Errorf("evm: extra.refundDeadline %d is not a uint48", e.RefundDeadline)
	case e.RefundDeadline < e.CaptureDeadline:
		return t, fmt.Errorf("evm: extra.refundDeadline %d is before extra.captureDeadline %d", e.RefundDeadline, e.CaptureDeadline)
	}
	switch {
	case e.MaxFeeBps > 10000:
		return t, fmt.Errorf("evm: extra.maxFeeBps %d is above 10000", e.MaxFeeBps)
	case e.MinFeeBps > e.MaxFeeBps:
		return t, fmt.Errorf("evm: extra.minFeeBps %d is above extra.maxFeeBps %d", e.MinFeeBps, e.MaxFeeBps)
	case t.FeeRecipient == (Address{}) && e.MaxFeeBps != 0:
		return t, errors.New("evm: a zero extra.feeRecipient needs extra.minFeeBps and extra.maxFeeBps of 0")
	}
	return t, nil
}

// decodeExtra reads an offer's extra into AuthCaptureExtra: members of the
// wrong JSON type (a deadline as a string, a fraction) are refused with
// their name; unknown members are ignored.
func decodeExtra(m map[string]any) (AuthCaptureExtra, error) {
	var e AuthCaptureExtra
	if m == nil {
		return e, errors.New("evm: the auth-capture offer has no extra")
	}
	b, err := json.Marshal(m)
	if err != nil {
		return e, fmt.Errorf("evm: extra: %w", err)
	}
	if err := json.Unmarshal(b, &e); err != nil {
		return e, fmt.Errorf("evm: extra: %w", fieldError(err, "extra"))
	}
	return e, nil
}

// fieldError rewrites the type errors of encoding/json to name the member
// by its path under prefix ("payload.authorization.value: a JSON number,
// want string").
func fieldError(err error, prefix string) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Errorf("%s.%s: a JSON %s, want %s", prefix, te.Field, te.Value, te.Type)
	}
	return err
}
