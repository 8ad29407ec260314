// Package problem is the one error type of the project's HTTP doors: an
// RFC 9457 "application/problem+json" body, with a machine-readable code
// and a list of field errors for validation.
//
// Every error the project answers over HTTP, and every *Details a client
// of package router or trust returns, carries one of the Code constants
// below, so that a host compares codes, never message text:
//
//	var p *problem.Details
//	if errors.As(err, &p) && p.Code == problem.CodeInsufficientSessions {
//		// no healthy sessions: back off and retry
//	}
//
// router.Error and trust.Error are names of [Details], so errors.As finds
// the same type whichever layer produced the error, and router.Code is
// [Code]. Codes are stable across releases: new ones may be added, none is
// renamed or removed before 1.0 without a changelog entry.
package problem

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"net/http"
	"slices"
	"strings"
)

// ContentType is the media type of a problem body (RFC 9457, section 3).
const ContentType = "application/problem+json"

// TypePrefix starts the "type" URI of every problem the project writes; the
// machine code follows it.
const TypePrefix = "urn:vouch:problem:"

// Code is a machine-readable problem code, stable across releases.
type Code string

// The codes the project emits, with the HTTP status each comes with.
const (
	// CodeInvalidRequest (400): the input failed validation; Errors
	// names each field by its JSON path.
	CodeInvalidRequest Code = "invalid_request"
	// CodeMalformedJSON (400): the body is not the JSON expected (not
	// JSON, too deep, a repeated member, invalid UTF-8).
	CodeMalformedJSON Code = "malformed_json"
	// CodeUnauthorized (401): no credential, or one the server does not
	// know; the answer carries a WWW-Authenticate challenge.
	CodeUnauthorized Code = "unauthorized"
	// CodePaymentRequired (402): a paid route called without a payment
	// that verifies; the x402 terms come with it.
	CodePaymentRequired Code = "payment_required"
	// CodeForbidden (403): the server refused the caller. vouch's own
	// servers answer what a caller may not see (another integration's
	// private receipt) with the 404 of CodeNotFound, so that existence
	// is not leaked; a client of package router or trust gives this code
	// to a 403 answer without a problem body, such as a proxy's.
	CodeForbidden Code = "forbidden"
	// CodeNotFound (404): no such route, receipt or task.
	CodeNotFound Code = "not_found"
	// CodeMethodNotAllowed (405): the route exists for other methods;
	// Allow lists them.
	CodeMethodNotAllowed Code = "method_not_allowed"
	// CodeConflict (409): the request conflicts with another, such as an
	// x402 payment id sent with another payment or request, or whose
	// first request still runs. A repeat of an Idempotency-Key is never
	// 409: it waits for the first request, or is CodeUnprocessable when
	// its method, path or body differ.
	CodeConflict Code = "conflict"
	// CodeBodyTooLarge (413): the body exceeds the route's limit.
	CodeBodyTooLarge Code = "body_too_large"
	// CodeUnsupportedMediaType (415): the body is not application/json.
	CodeUnsupportedMediaType Code = "unsupported_media_type"
	// CodeUnprocessable (422): a well-formed request that cannot be
	// served as asked, such as an Idempotency-Key reused with another
	// body.
	CodeUnprocessable Code = "unprocessable"
	// CodeRateLimited (429): a trial caller over its limit; Retry-After
	// says when to try again.
	CodeRateLimited Code = "rate_limited"
	// CodeInsufficientSessions (503): not enough distinct, healthy
	// sessions for the replicas asked for.
	CodeInsufficientSessions Code = "insufficient_sessions"
	// CodeDisagreement (409): the replicas disagreed under
	// disagreement_policy fail_hard, or failed runs outweigh the
	// answers; Extra holds the per-replica evidence.
	CodeDisagreement Code = "disagreement"
	// CodeAllReplicasFailed (502): no replica answered; Detail names
	// each worker's failure and Extra holds the evidence.
	CodeAllReplicasFailed Code = "all_replicas_failed"
	// CodeNotDelivered (502): a paid answer failed its validation and
	// was neither delivered nor settled (trust/trustpay).
	CodeNotDelivered Code = "not_delivered"
	// CodeTimeout (504): no answer within the time asked for or allowed.
	CodeTimeout Code = "timeout"
	// CodeUnavailable (503): a dependency (a store, a facilitator, a
	// remote service) cannot be reached; retry later.
	CodeUnavailable Code = "unavailable"
	// CodeX402NotConfigured (501): a pay-per-call route of a server that
	// takes no payments; use the normal or trial route.
	CodeX402NotConfigured Code = "x402_not_configured"
	// CodeUnknownCall (404): an outcome reported on a call the server
	// does not remember among the caller's own (another caller's call is
	// answered alike, so that its existence is not revealed).
	CodeUnknownCall Code = "unknown_call"
	// CodeReputationOff (409): an outcome reported to a server that
	// keeps no reputation, so that no outcome can teach it anything.
	CodeReputationOff Code = "reputation_off"
	// CodeInternal (500): a fault of the server; its log has the cause.
	CodeInternal Code = "internal"
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

// MaxFieldErrors is the most field errors a problem from [Invalid] lists.
// Past it, one more field error, rule [RuleUnlisted], says how many more
// were found, so that a body with a million mistakes gets an answer of
// bounded size that still says how many there were.
const MaxFieldErrors = 100

// RuleUnlisted is the rule of the field error that ends a list cut at
// [MaxFieldErrors]: its field is "(more)" and its message starts with the
// number of errors found and not listed.
const RuleUnlisted = "unlisted"

// detailErrors is how many field errors the detail of a problem from
// Invalid repeats; it counts the others.
const detailErrors = 3

// Invalid returns a 400 problem listing the field errors: the first
// [MaxFieldErrors] of them and, when there are more, a last one, rule
// [RuleUnlisted], that counts the others (errs may hold such an error,
// from a problem Invalid returned before, whose count is added). The
// detail repeats the first three and says how many more there are.
func Invalid(errs []FieldError) *Details {
	p := New(http.StatusBadRequest, CodeInvalidRequest, "")
	listed, unlisted := errs, 0
	if len(errs) > MaxFieldErrors || slices.ContainsFunc(errs, isUnlisted) {
		listed = make([]FieldError, 0, min(len(errs), MaxFieldErrors))
		for _, e := range errs {
			var n int
			switch {
			case isUnlisted(e):
				if _, err := fmt.Sscanf(e.Message, "%d", &n); err != nil || n < 1 {
					n = 1
				}
			case len(listed) < MaxFieldErrors:
				listed = append(listed, e)
			default:
				n = 1
			}
			unlisted = addCount(unlisted, n)
		}
	}
	p.Errors = listed
	if unlisted > 0 {
		p.Errors = append(p.Errors, FieldError{Field: "(more)", Rule: RuleUnlisted, Message: plural(unlisted, "more field error was", "more field errors were") + " found and not listed"})
	}
	parts := make([]string, 0, detailErrors+1)
	for _, e := range listed[:min(len(listed), detailErrors)] {
		parts = append(parts, e.Field+": "+e.Message)
	}
	if more := addCount(len(listed)-len(parts), unlisted); more > 0 {
		parts = append(parts, "and "+plural(more, "more field error", "more field errors"))
	}
	p.Detail = strings.Join(parts, "; ")
	return p
}

func isUnlisted(e FieldError) bool { return e.Rule == RuleUnlisted }

// addCount returns a+b, two counts, or the largest int when the sum is
// larger.
func addCount(a, b int) int {
	if a > math.MaxInt-b {
		return math.MaxInt
	}
	return a + b
}

// plural returns n followed by one or many, as n says.
func plural(n int, one, many string) string {
	if n == 1 {
		return "1 " + one
	}
	return fmt.Sprintf("%d %s", n, many)
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

// Encode returns p as JSON, followed by a newline, without escaping <, >
// and & (a detail quoting "<n>d" reads as written). Extra that cannot be
// encoded is left out rather than the whole body lost.
func Encode(p *Details) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(p); err != nil { // only Extra can fail to encode
		q := *p
		q.Extra = nil
		buf.Reset()
		_ = enc.Encode(&q)
	}
	return buf.Bytes()
}

// Write sends p as the response, with its status and the problem media type.
// A status that is not an error's (4xx or 5xx), such as one left zero, is
// sent as 500, and the body's status member says the same; p is not
// changed.
func Write(w http.ResponseWriter, p *Details) {
	if p.Status < 400 || p.Status > 599 {
		q := *p
		q.Status = http.StatusInternalServerError
		p = &q
	}
	body := Encode(p)
	h := w.Header()
	h.Set("Content-Type", ContentType)
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(p.Status)
	w.Write(body)
}
