package x402

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"

	"github.com/vouchkit/vouch/internal/jsonbody"
	"github.com/vouchkit/vouch/problem"
)

// maxHeaderValue bounds the header values the decoders accept (base64
// characters). Terms with many offers stay far below it.
const maxHeaderValue = 64 << 10

// EncodeHeader returns v as a header value: standard base64, with padding,
// of its compact JSON.
func EncodeHeader(v any) (string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("x402: encoding header: %w", err)
	}
	return base64.StdEncoding.EncodeToString(b), nil
}

// decodeBase64 reads standard base64. Like the official SDKs it accepts a
// value without its padding, and it ignores surrounding spaces.
func decodeBase64(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, fmt.Errorf("%w: empty value", ErrInvalidHeader)
	}
	if len(s) > maxHeaderValue {
		return nil, fmt.Errorf("%w: value longer than %d bytes", ErrInvalidHeader, maxHeaderValue)
	}
	b, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(s, "="))
	if err != nil {
		return nil, fmt.Errorf("%w: not standard base64: %v", ErrInvalidHeader, err)
	}
	return b, nil
}

func decodeHeader(s string, v any) error {
	b, err := decodeBase64(s)
	if err != nil {
		return err
	}
	if err := jsonbody.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidHeader, err)
	}
	return nil
}

// invalid returns a 400 problem listing the fields, wrapped with
// ErrInvalidHeader, or nil when errs is empty.
func invalid(errs []problem.FieldError) error {
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf("%w: %w", ErrInvalidHeader, problem.Invalid(errs))
}

func required(errs []problem.FieldError, field, value string) []problem.FieldError {
	if value == "" {
		errs = append(errs, problem.FieldError{Field: field, Rule: "required", Message: "is required"})
	}
	return errs
}

func checkVersion(errs []problem.FieldError, v int) []problem.FieldError {
	if v != Version1 && v != Version2 {
		errs = append(errs, problem.FieldError{Field: "x402Version", Rule: "oneof", Message: fmt.Sprintf("must be 1 or 2, got %d", v)})
	}
	return errs
}

func checkOffers(errs []problem.FieldError, prefix string, accepts []PaymentRequirements) []problem.FieldError {
	for i, r := range accepts {
		p := fmt.Sprintf("%s[%d].", prefix, i)
		errs = required(errs, p+"scheme", r.Scheme)
		errs = required(errs, p+"network", r.Network)
		errs = required(errs, p+"amount", r.Amount)
		errs = required(errs, p+"payTo", r.PayTo)
	}
	return errs
}

// DecodePaymentRequired reads the value of a PAYMENT-REQUIRED header.
// Errors wrap ErrInvalidHeader and, for invalid members, a *problem
// details value naming the JSON field path.
func DecodePaymentRequired(s string) (*PaymentRequired, error) {
	var pr PaymentRequired
	if err := decodeHeader(s, &pr); err != nil {
		return nil, err
	}
	errs := checkVersion(nil, pr.X402Version)
	errs = checkOffers(errs, "accepts", pr.Accepts)
	if err := invalid(errs); err != nil {
		return nil, err
	}
	return &pr, nil
}

// DecodePaymentRequiredV1 reads the JSON body of a version 1 402 answer.
func DecodePaymentRequiredV1(body []byte) (*PaymentRequiredV1, error) {
	var pr PaymentRequiredV1
	if err := jsonbody.Unmarshal(body, &pr); err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalidTerms, err)
	}
	var errs []problem.FieldError
	if pr.X402Version != Version1 {
		errs = append(errs, problem.FieldError{Field: "x402Version", Rule: "eq", Message: fmt.Sprintf("must be 1, got %d", pr.X402Version)})
	}
	for i, r := range pr.Accepts {
		p := fmt.Sprintf("accepts[%d].", i)
		errs = required(errs, p+"scheme", r.Scheme)
		errs = required(errs, p+"network", r.Network)
		errs = required(errs, p+"maxAmountRequired", r.MaxAmountRequired)
		errs = required(errs, p+"payTo", r.PayTo)
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%w: %w", ErrInvalidTerms, problem.Invalid(errs))
	}
	return &pr, nil
}

// DecodePaymentPayload reads the value of a PAYMENT-SIGNATURE or X-PAYMENT
// header, of either version.
func DecodePaymentPayload(s string) (*PaymentPayload, error) {
	var p PaymentPayload
	if err := decodeHeader(s, &p); err != nil {
		return nil, err
	}
	errs := checkVersion(nil, p.X402Version)
	field := "accepted."
	if p.X402Version == Version1 {
		field = ""
	}
	errs = required(errs, field+"scheme", p.Accepted.Scheme)
	errs = required(errs, field+"network", p.Accepted.Network)
	if t := strings.TrimSpace(string(p.Payload)); t == "" || t[0] != '{' {
		errs = append(errs, problem.FieldError{Field: "payload", Rule: "required", Message: "must be an object"})
	}
	if err := invalid(errs); err != nil {
		return nil, err
	}
	return &p, nil
}

// DecodeSettleResponse reads the value of a PAYMENT-RESPONSE or
// X-PAYMENT-RESPONSE header.
func DecodeSettleResponse(s string) (*SettleResponse, error) {
	var sr SettleResponse
	if err := decodeHeader(s, &sr); err != nil {
		return nil, err
	}
	return &sr, nil
}

// SettlementFromResponse returns the settlement a server reported in the
// PAYMENT-RESPONSE header of resp, or else in X-PAYMENT-RESPONSE. It
// returns an error wrapping ErrNoSettlement when neither is present.
func SettlementFromResponse(resp *http.Response) (*SettleResponse, error) {
	if resp == nil {
		return nil, ErrNoSettlement
	}
	return settlementFromHeader(resp.Header)
}

func settlementFromHeader(h http.Header) (*SettleResponse, error) {
	for _, name := range [...]string{HeaderPaymentResponse, HeaderXPaymentResponse} {
		if v := h.Get(name); v != "" {
			sr, err := DecodeSettleResponse(v)
			if err != nil {
				return nil, fmt.Errorf("x402: %s: %w", name, err)
			}
			return sr, nil
		}
	}
	return nil, ErrNoSettlement
}
