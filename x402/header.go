package x402

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/vouchkit/vouch/internal/httpapi"
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
		return nil, headerError(problem.CodeInvalidRequest, "the value is empty; it must be base64 of a JSON object")
	}
	if len(s) > maxHeaderValue {
		return nil, headerError(problem.CodeInvalidRequest, "the value is longer than %d bytes", maxHeaderValue)
	}
	b, err := base64.RawStdEncoding.DecodeString(strings.TrimRight(s, "="))
	if err != nil {
		return nil, headerError(problem.CodeMalformedJSON, "the value is not standard base64: %v", err)
	}
	return b, nil
}

// decodeHeader reads the base64 of a JSON object into v. A value that
// decodes to something other than a JSON object is described as what it
// is (binary data, text, another JSON value), with offsets counted in the
// decoded bytes; the errors of a JSON object are those of
// jsonbody.Unmarshal, with field paths inside the object.
func decodeHeader(s string, v any) error {
	b, err := decodeBase64(s)
	if err != nil {
		return err
	}
	t := bytes.TrimLeft(b, " \t\r\n")
	if len(t) == 0 {
		return headerError(problem.CodeMalformedJSON, "the value decodes to white space; it must be base64 of a JSON object")
	}
	if !utf8.Valid(b) && t[0] != '{' {
		return headerError(problem.CodeMalformedJSON, "the value is not base64 of JSON: it decodes to %d bytes of binary data, not UTF-8 text", len(b))
	}
	var syntax *json.SyntaxError
	switch err := json.NewDecoder(bytes.NewReader(b)).Decode(new(json.RawMessage)); {
	case errors.As(err, &syntax) && t[0] != '{':
		return headerError(problem.CodeMalformedJSON, "the value is not base64 of JSON: it decodes to text that is not JSON (%s, at byte offset %d)", syntax, max(syntax.Offset-1, 0))
	case errors.As(err, &syntax):
		return headerError(problem.CodeMalformedJSON, "the value decodes to invalid JSON: %s, at byte offset %d of the decoded text", syntax, max(syntax.Offset-1, 0))
	case err != nil: // io.ErrUnexpectedEOF
		return headerError(problem.CodeMalformedJSON, "the value decodes to a JSON %s cut short: the text ends before the value does", jsonKind(t[0]))
	case t[0] != '{':
		return headerError(problem.CodeMalformedJSON, "the value is base64 of a JSON %s; it must be base64 of a JSON object", jsonKind(t[0]))
	}
	if err := jsonbody.Unmarshal(b, v); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidHeader, err)
	}
	return nil
}

// jsonKind names the kind of the JSON value that starts with c.
func jsonKind(c byte) string {
	switch c {
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	case '{':
		return "object"
	}
	return "number"
}

// headerError returns an error wrapping ErrInvalidHeader and the 400
// problem of code with the detail format.
func headerError(code problem.Code, format string, args ...any) error {
	return fmt.Errorf("%w: %w", ErrInvalidHeader, problem.Newf(http.StatusBadRequest, code, format, args...))
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
// Errors wrap ErrInvalidHeader and a 400 *problem.Details: one that says
// what the value is when it is not base64 of a JSON object (not base64,
// binary data, text that is not JSON, another JSON value), and one
// naming the JSON field path of each invalid member.
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

// paymentHeader returns the header that carries a request's payment and
// its value ("" when it carries none), or a 400 problem when the request
// sends the proof twice (one header more than once, or both, since a
// proxy before the server and the server could each read another) or
// sends a header empty: such a header is refused rather than read as no
// proof, as an empty Idempotency-Key is. The problem's field errors name
// each header at fault: rule "unique" for one sent twice,
// "excluded_with" for each of both, "required" for one sent empty.
func paymentHeader(h http.Header) (name, value string, bad *problem.Details) {
	v2, bad := proofHeader(h, HeaderPaymentSignature)
	if bad != nil {
		return "", "", bad
	}
	v1, bad := proofHeader(h, HeaderXPayment)
	switch {
	case bad != nil:
		return "", "", bad
	case v2 != "" && v1 != "":
		const send = "; send one payment, in the header of its x402 version"
		bad := problem.New(http.StatusBadRequest, problem.CodeInvalidRequest,
			"both "+HeaderPaymentSignature+" and "+HeaderXPayment+" are sent"+send)
		bad.Errors = []problem.FieldError{
			{Field: HeaderPaymentSignature, Rule: "excluded_with", Message: "must be absent when " + HeaderXPayment + " is sent" + send},
			{Field: HeaderXPayment, Rule: "excluded_with", Message: "must be absent when " + HeaderPaymentSignature + " is sent" + send},
		}
		return "", "", bad
	case v2 != "":
		return HeaderPaymentSignature, v2, nil
	}
	return HeaderXPayment, v1, nil
}

// proofHeader returns the value of the proof header name of h, "" when h
// has none, or a 400 problem naming it when it is sent more than once or
// empty.
func proofHeader(h http.Header, name string) (string, *problem.Details) {
	v, bad := httpapi.OneHeader(h, name)
	if bad == nil && len(h.Values(name)) == 1 && strings.TrimSpace(v) == "" {
		bad = httpapi.HeaderProblem(name, "required",
			"is empty; send the payment's proof, base64 of a JSON object, or no "+name+" header")
	}
	return v, bad
}

// DecodePaymentPayload reads the value of a PAYMENT-SIGNATURE or X-PAYMENT
// header, of either version, with the errors of [DecodePaymentRequired].
// A member is named as the proof's version writes it (version 1's
// top-level scheme, version 2's accepted.scheme); a proof without a
// version of 1 or 2 is named as version 2's.
func DecodePaymentPayload(s string) (*PaymentPayload, error) {
	return decodePaymentPayload(s, Version2)
}

// decodePaymentPayload is DecodePaymentPayload of a proof sent in the
// header of version: a proof whose x402Version is not 1 or 2 has its
// members named as that version writes them.
func decodePaymentPayload(s string, version int) (*PaymentPayload, error) {
	var p PaymentPayload
	if err := decodeHeader(s, &p); err != nil {
		return nil, err
	}
	if err := invalid(p.check(version)); err != nil {
		return nil, err
	}
	return &p, nil
}

// Check reports what a proof decoded from JSON by other means than a
// header (as one carried in MCP's _meta) lacks that [DecodePaymentPayload]
// requires: an x402Version of 1 or 2, the scheme and the network, and a
// payload object. Its error is a *problem.Details whose field errors name
// the members as the proof's version writes them.
func (p *PaymentPayload) Check() error {
	if errs := p.check(Version2); len(errs) > 0 {
		return problem.Invalid(errs)
	}
	return nil
}

// check lists the field errors of p, its members named as version writes
// them when p names no version of its own.
func (p *PaymentPayload) check(version int) []problem.FieldError {
	errs := checkVersion(nil, p.X402Version)
	if p.X402Version == Version1 || p.X402Version == Version2 {
		version = p.X402Version
	}
	field := "accepted."
	if version == Version1 {
		field = ""
	}
	errs = required(errs, field+"scheme", p.Accepted.Scheme)
	errs = required(errs, field+"network", p.Accepted.Network)
	if t := strings.TrimSpace(string(p.Payload)); t == "" || t[0] != '{' {
		errs = append(errs, problem.FieldError{Field: "payload", Rule: "required", Message: "must be an object"})
	}
	return errs
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
