// Package problem is the one error body of the project: RFC 9457
// "application/problem+json", with a list of field errors for validation.
//
// The public packages expose [Details] under their own names (router.Error,
// trust.Error), so that errors.As finds the same type whichever layer
// produced it.
package problem

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
)

// ContentType is the media type of a problem body (RFC 9457, section 3).
const ContentType = "application/problem+json"

// TypePrefix starts the "type" URI of every problem the project writes; the
// machine code follows it.
const TypePrefix = "urn:vouch:problem:"

// Code is a machine-readable problem code, stable across releases.
type Code string

// The codes the project uses.
const (
	CodeInvalidRequest       Code = "invalid_request"        // 400: input failed validation
	CodeMalformedJSON        Code = "malformed_json"         // 400: the body is not the JSON expected
	CodeUnauthorized         Code = "unauthorized"           // 401
	CodePaymentRequired      Code = "payment_required"       // 402
	CodeForbidden            Code = "forbidden"              // 403
	CodeNotFound             Code = "not_found"              // 404
	CodeMethodNotAllowed     Code = "method_not_allowed"     // 405
	CodeConflict             Code = "conflict"               // 409
	CodeBodyTooLarge         Code = "body_too_large"         // 413
	CodeUnsupportedMediaType Code = "unsupported_media_type" // 415
	CodeUnprocessable        Code = "unprocessable"          // 422
	CodeRateLimited          Code = "rate_limited"           // 429
	CodeInsufficientSessions Code = "insufficient_sessions"  // 503: not enough healthy sessions
	CodeDisagreement         Code = "disagreement"           // 409: fail_hard tripped
	CodeAllReplicasFailed    Code = "all_replicas_failed"    // 502
	CodeNotDelivered         Code = "not_delivered"          // 502: a paid answer failed its validation and was not settled
	CodeTimeout              Code = "timeout"                // 504
	CodeUnavailable          Code = "unavailable"            // 503
	CodeInternal             Code = "internal"               // 500
)

// Details is an RFC 9457 problem. It is also a Go error, so a handler can
// return it and a client can hand it back to its caller unchanged.
type Details struct {
	// Type is a URI naming the kind of problem: TypePrefix followed by Code.
	Type string `json:"type,omitempty"`
	// Title is a short, human-readable summary of the kind of problem.
	Title string `json:"title"`
	// Status is the HTTP status code.
	Status int `json:"status"`
	// Detail explains this occurrence.
	Detail string `json:"detail,omitempty"`
	// Instance identifies this occurrence, usually the request path.
	Instance string `json:"instance,omitempty"`
	// Code is the machine-readable code (an extension member).
	Code Code `json:"code,omitempty"`
	// RequestID is the server's id for the request (an extension member).
	RequestID string `json:"request_id,omitempty"`
	// Errors lists the fields that failed validation, by JSON path.
	Errors []FieldError `json:"errors,omitempty"`
	// Extra holds data specific to the code, such as the per-replica
	// evidence of a disagreement (an extension member).
	Extra json.RawMessage `json:"extra,omitempty"`
}

// FieldError names one field that failed validation.
type FieldError struct {
	// Field is the JSON path of the field, such as "consensus.replicas" or
	// "input.items[2]".
	Field string `json:"field"`
	// Rule is the rule it broke, such as "required" or "oneof".
	Rule string `json:"rule"`
	// Message explains the failure to a person.
	Message string `json:"message"`
}

// New returns a problem with the given status, code and detail, and the
// standard title of the status.
func New(status int, code Code, detail string) *Details {
	return &Details{
		Type:   TypePrefix + string(code),
		Title:  http.StatusText(status),
		Status: status,
		Detail: detail,
		Code:   code,
	}
}

// Newf is New with a formatted detail.
func Newf(status int, code Code, format string, args ...any) *Details {
	return New(status, code, fmt.Sprintf(format, args...))
}

// Invalid returns a 400 problem listing the field errors.
func Invalid(errs []FieldError) *Details {
	p := New(http.StatusBadRequest, CodeInvalidRequest, "")
	p.Errors = errs
	parts := make([]string, len(errs))
	for i, e := range errs {
		parts[i] = e.Field + ": " + e.Message
	}
	p.Detail = strings.Join(parts, "; ")
	return p
}

// Error returns the status, code and detail on one line.
func (p *Details) Error() string {
	s := fmt.Sprintf("%d %s", p.Status, p.Code)
	if p.Code == "" {
		s = fmt.Sprintf("%d %s", p.Status, p.Title)
	}
	if p.Detail != "" {
		s += ": " + p.Detail
	}
	return s
}

// Write sends p as the response, with its status and the problem media type.
func Write(w http.ResponseWriter, p *Details) {
	body, err := json.Marshal(p)
	if err != nil { // only Extra can fail to encode; drop it rather than send nothing
		q := *p
		q.Extra = nil
		body, _ = json.Marshal(&q)
	}
	h := w.Header()
	h.Set("Content-Type", ContentType)
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(p.Status)
	w.Write(append(body, '\n'))
}
