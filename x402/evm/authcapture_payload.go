package evm

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Permit2Transfer is a Permit2 PermitTransferFrom (no witness), the
// authorization of an "auth-capture" payload paid by Permit2.
type Permit2Transfer struct {
	// From is the owner of the tokens, the payer. It is not signed.
	From string `json:"from"`
	// Permitted is the token and the amount.
	Permitted TokenPermissions `json:"permitted"`
	// Spender is the Permit2 token collector of the deployment.
	Spender string `json:"spender"`
	// Nonce is the payer-agnostic PaymentInfo hash, as a decimal uint256.
	Nonce string `json:"nonce"`
	// Deadline is PaymentInfo.preApprovalExpiry, Unix seconds in decimal.
	Deadline string `json:"deadline"`
}

// AuthCapturePayload is the payload a payer sends for an "auth-capture"
// offer (the collect payload, settled as authorize): one signed token
// authorization, Authorization (ERC-3009 ReceiveWithAuthorization, the
// default) or Permit2Authorization, and the payment's salt.
type AuthCapturePayload struct {
	// Authorization is an ERC-3009 ReceiveWithAuthorization to the
	// EIP-3009 token collector, nil for Permit2.
	Authorization *Authorization `json:"authorization,omitempty"`
	// Permit2Authorization is a Permit2 PermitTransferFrom to the Permit2
	// token collector, nil for ERC-3009.
	Permit2Authorization *Permit2Transfer `json:"permit2Authorization,omitempty"`
	// Signature is the payer's signature of the authorization, 0x hex.
	Signature string `json:"signature"`
	// Salt is PaymentInfo.salt, 0x and 64 hex digits: the payer's random
	// bytes, or, when the terms are Bound, their commitment.
	Salt string `json:"salt"`
	// SaltNonce is the payer's random bytes when the terms are Bound,
	// "" otherwise.
	SaltNonce string `json:"saltNonce,omitempty"`
}

// From returns the payer the payload names.
func (p AuthCapturePayload) From() string {
	if p.Authorization != nil {
		return p.Authorization.From
	}
	if p.Permit2Authorization != nil {
		return p.Permit2Authorization.From
	}
	return ""
}

// The operations of an "auth-capture" payment a server asks a facilitator
// for after the hold, named by a lifecycle payload's type.
const (
	OperationCapture = "capture"
	OperationVoid    = "void"
	OperationRefund  = "refund"
)

// AuthCaptureLifecycle is the payload of a settle after the hold: a
// capture, a void or a refund of the payment PaymentInfo, with the
// receiver authorizer's EIP-712 consent. Amounts are decimal strings.
type AuthCaptureLifecycle struct {
	// Type is "capture", "void" or "refund".
	Type string `json:"type"`
	// PaymentInfo is the payment, exactly as the escrow keeps it.
	PaymentInfo PaymentInfo `json:"paymentInfo"`
	// SaltNonce opens the salt's commitment to the receiver authorizer.
	SaltNonce string `json:"saltNonce"`
	// Amount is what to capture or refund ("" for a void).
	Amount string `json:"amount,omitempty"`
	// FeeAmount and FeeReceiver are the fee of a capture.
	FeeAmount   string `json:"feeAmount,omitempty"`
	FeeReceiver string `json:"feeReceiver,omitempty"`
	// ExpectedCapturableAmount and ExpectedRefundableAmount are the
	// escrow's balances the authorizer signed against (capture, refund):
	// they make each consent single-use.
	ExpectedCapturableAmount string `json:"expectedCapturableAmount,omitempty"`
	ExpectedRefundableAmount string `json:"expectedRefundableAmount,omitempty"`
	// AuthorizerSignature is the receiver authorizer's signature of the
	// operation's typed data.
	AuthorizerSignature string `json:"authorizerSignature"`
	// VoidAuthorizerSignature, on a capture only, voids the rest of the
	// hold in the same settle.
	VoidAuthorizerSignature string `json:"voidAuthorizerSignature,omitempty"`
}

// AuthCaptureOperation returns the payload.type of an "auth-capture"
// payload: "" for the payer's collect payload, or the lifecycle operation.
// It fails when payload is not a JSON object or its type is not a string.
func AuthCaptureOperation(payload []byte) (string, error) {
	var probe struct {
		Type *string `json:"type"`
	}
	if err := json.Unmarshal(payload, &probe); err != nil {
		return "", fmt.Errorf("evm: payload: %w", fieldError(err, "payload"))
	}
	if probe.Type == nil {
		return "", nil
	}
	if *probe.Type == "" {
		return "", errors.New("evm: payload.type is empty")
	}
	return *probe.Type, nil
}

// decodeStrict decodes one JSON object into v, refusing unknown members
// and anything after the object.
func decodeStrict(data []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return fieldError(err, "payload")
	}
	if _, err := dec.Token(); err != io.EOF {
		return errors.New("data after the payload object")
	}
	return nil
}

// DecodeAuthCapturePayload reads and checks the shape of a payer's
// "auth-capture" payload: exactly one of authorization and
// permit2Authorization, every address, number and hex value well formed,
// no member it does not know. Errors name the member
// ("payload.authorization.nonce"). It checks nothing against an offer;
// see [AuthCaptureTerms.Verify].
func DecodeAuthCapturePayload(data []byte) (AuthCapturePayload, error) {
	var p AuthCapturePayload
	if err := decodeStrict(data, &p); err != nil {
		return AuthCapturePayload{}, fmt.Errorf("evm: auth-capture payload: %w", err)
	}
	if err := p.check(); err != nil {
		return AuthCapturePayload{}, fmt.Errorf("evm: auth-capture payload: %w", err)
	}
	return p, nil
}

func (p AuthCapturePayload) check() error {
	switch {
	case p.Authorization == nil && p.Permit2Authorization == nil:
		return errors.New("payload: neither authorization nor permit2Authorization")
	case p.Authorization != nil && p.Permit2Authorization != nil:
		return errors.New("payload: both authorization and permit2Authorization")
	}
	if err := checkHexBytes("payload.signature", p.Signature); err != nil {
		return err
	}
	if err := checkWord("payload.salt", p.Salt); err != nil {
		return err
	}
	if p.SaltNonce != "" {
		if err := checkWord("payload.saltNonce", p.SaltNonce); err != nil {
			return err
		}
	}
	if a := p.Authorization; a != nil {
		return checkFields("payload.authorization.",
			addr("from", a.From), addr("to", a.To),
			num("value", a.Value), num("validAfter", a.ValidAfter), num("validBefore", a.ValidBefore),
			word32("nonce", a.Nonce))
	}
	a := p.Permit2Authorization
	return checkFields("payload.permit2Authorization.",
		addr("from", a.From), addr("permitted.token", a.Permitted.Token), num("permitted.amount", a.Permitted.Amount),
		addr("spender", a.Spender), num("nonce", a.Nonce), num("deadline", a.Deadline))
}

// DecodeAuthCaptureLifecycle reads and checks the shape of a capture, void
// or refund payload: a known type, the paymentInfo, saltNonce and the
// authorizer's signature, the amounts the operation needs and no member it
// does not take. Errors name the member.
func DecodeAuthCaptureLifecycle(data []byte) (AuthCaptureLifecycle, error) {
	var l AuthCaptureLifecycle
	if err := decodeStrict(data, &l); err != nil {
		return AuthCaptureLifecycle{}, fmt.Errorf("evm: auth-capture lifecycle payload: %w", err)
	}
	if err := l.check(); err != nil {
		return AuthCaptureLifecycle{}, fmt.Errorf("evm: auth-capture lifecycle payload: %w", err)
	}
	return l, nil
}

func (l AuthCaptureLifecycle) check() error {
	if err := l.PaymentInfo.check("payload.paymentInfo."); err != nil {
		return err
	}
	if err := checkWord("payload.saltNonce", l.SaltNonce); err != nil {
		return err
	}
	if err := checkHexBytes("payload.authorizerSignature", l.AuthorizerSignature); err != nil {
		return err
	}
	present := map[string]bool{
		"amount": l.Amount != "", "feeAmount": l.FeeAmount != "", "feeReceiver": l.FeeReceiver != "",
		"expectedCapturableAmount": l.ExpectedCapturableAmount != "", "expectedRefundableAmount": l.ExpectedRefundableAmount != "",
		"voidAuthorizerSignature": l.VoidAuthorizerSignature != "",
	}
	var want []string
	switch l.Type {
	case OperationCapture:
		want = []string{"amount", "feeAmount", "feeReceiver", "expectedCapturableAmount", "expectedRefundableAmount"}
	case OperationVoid:
	case OperationRefund:
		want = []string{"amount", "expectedCapturableAmount", "expectedRefundableAmount"}
	default:
		return fmt.Errorf("payload.type %q is not %q, %q or %q", l.Type, OperationCapture, OperationVoid, OperationRefund)
	}
	for _, name := range []string{"amount", "feeAmount", "feeReceiver", "expectedCapturableAmount", "expectedRefundableAmount", "voidAuthorizerSignature"} {
		wanted := slices.Contains(want, name) || name == "voidAuthorizerSignature" && l.Type == OperationCapture
		switch {
		case present[name] && !wanted:
			return fmt.Errorf("payload.%s does not belong to a %s", name, l.Type)
		case !present[name] && slices.Contains(want, name):
			return fmt.Errorf("payload.%s is required for a %s", name, l.Type)
		}
	}
	fields := []field{}
	if l.Amount != "" {
		fields = append(fields, num("amount", l.Amount))
	}
	if l.FeeAmount != "" {
		fields = append(fields, num("feeAmount", l.FeeAmount), addr("feeReceiver", l.FeeReceiver))
	}
	if l.ExpectedCapturableAmount != "" {
		fields = append(fields, num("expectedCapturableAmount", l.ExpectedCapturableAmount), num("expectedRefundableAmount", l.ExpectedRefundableAmount))
	}
	if l.VoidAuthorizerSignature != "" {
		if err := checkHexBytes("payload.voidAuthorizerSignature", l.VoidAuthorizerSignature); err != nil {
			return err
		}
	}
	return checkFields("payload.", fields...)
}

// field is one member to check or encode: its name and its value as an
// ABI word.
type field struct {
	name   string
	encode func() ([]byte, error)
}

func addr(name, s string) field {
	return field{name, func() ([]byte, error) {
		a, err := ParseAddress(s)
		return word(a[:]), err
	}}
}

func num(name, s string) field {
	return field{name, func() ([]byte, error) { return uint256(s) }}
}

func word32(name, s string) field {
	return field{name, func() ([]byte, error) {
		w, err := parseHex32(s)
		return w[:], err
	}}
}

func checkFields(prefix string, fields ...field) error {
	for _, f := range fields {
		if _, err := f.encode(); err != nil {
			return fmt.Errorf("%s%s: %w", prefix, f.name, err)
		}
	}
	return nil
}

// checkWord checks a 32-byte value in the scheme's one spelling: 0x and
// 64 hex digits, zero-padded.
func checkWord(name, s string) error {
	if _, err := parseHex32(s); err != nil {
		return fmt.Errorf("%s: %w", name, err)
	}
	return nil
}

func checkHexBytes(name, s string) error {
	h, ok := strings.CutPrefix(s, "0x")
	if _, err := hex.DecodeString(h); !ok || err != nil || h == "" {
		return fmt.Errorf("%s: not 0x followed by hex digits", name)
	}
	return nil
}
