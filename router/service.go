package router

import (
	"context"
	"fmt"
	"net/http"
	"slices"

	"github.com/vouchkit/vouch/problem"
)

// Service runs the router's operations. The in-process [Engine] and the
// remote [Client] both implement it, and [NewHandler] serves any
// implementation over HTTP.
//
// Implementations must be safe for concurrent use. A method must not keep
// or modify the request after it returns. A verdict of INVALID, RETRY or
// NEEDS_SPEC is a result, not an error. A non-nil error means there is no
// response: an *Error (with an HTTP status and a machine code) or the
// context's error; a remote implementation ([Client]) may also return
// errors that carry no *Error (a transport failure after its retries, or
// one wrapping [ErrMalformedResponse], [ErrResponseTooLarge] or
// [ErrNoVariant]). Cancelling ctx stops the workers of the call.
//
// A Service may also implement [StatusReporter], which GET /api/v1/status
// of a [Handler] reports.
type Service interface {
	// DelegateV1 runs a prompt on req.SessionID (POST /api/v1/delegate).
	DelegateV1(ctx context.Context, req *DelegateV1Request) (*DelegateV1Response, error)
	// ValidateV1 judges an output on req.SessionID (POST /api/v1/validate).
	ValidateV1(ctx context.Context, req *ValidateV1Request) (*ValidateV1Response, error)
	// FactcheckV1 checks a claim on 3 or 5 replicas (POST /api/v1/factcheck).
	FactcheckV1(ctx context.Context, req *FactcheckV1Request) (*FactcheckResponse, error)
	// DelegateV2 runs a workflow on req.SessionID (POST /api/v2/delegate).
	DelegateV2(ctx context.Context, req *DelegateV2Request) (*DelegateV2Response, error)
	// ValidateV2 judges a claim on req.SessionID (POST /api/v2/validate).
	ValidateV2(ctx context.Context, req *ValidateV2Request) (*ValidateV2Response, error)
	// DelegateV3 runs a workflow on consensus.replicas sessions and returns
	// the majority's result (POST /api/v3/delegate).
	DelegateV3(ctx context.Context, req *DelegateV3Request) (*DelegateV3Response, error)
	// ValidateV3 judges a claim on consensus.replicas sessions and returns
	// the majority's verdict (POST /api/v3/validate).
	ValidateV3(ctx context.Context, req *ValidateV3Request) (*ValidateV3Response, error)
	// Factcheck checks a statement on consensus.replicas sessions
	// (POST /api/v3/factcheck).
	Factcheck(ctx context.Context, req *FactcheckRequest) (*FactcheckResponse, error)
}

// Error is the error of every operation, on the wire an RFC 9457
// application/problem+json body: problem.Details, with its fields Status
// (the HTTP status), Code (one of the problem.Code constants, such as
// problem.CodeInsufficientSessions), Title, Detail (what went wrong, in
// words: a worker's failure is named there), Errors (for invalid input,
// the failing fields by JSON path), RequestID, Instance and Extra (the
// per-replica evidence of a disagreement or of replicas that failed).
// Use errors.As to reach it and compare its Code, never its text; see
// package problem for every code and its status.
type Error = problem.Details

// FieldError names one field of a request that failed validation.
type FieldError = problem.FieldError

// Code is the machine-readable code of an [Error]: one of the constants of
// package problem (problem.CodeInvalidRequest, ...).
type Code = problem.Code

// Operation names one operation of the router: a [Service] method, or one
// of the routes a [Handler] answers itself (ping, about, status).
type Operation string

// The operations of [Service].
const (
	OpDelegateV1  Operation = "delegate_v1"
	OpValidateV1  Operation = "validate_v1"
	OpFactcheckV1 Operation = "factcheck_v1"
	OpDelegateV2  Operation = "delegate_v2"
	OpValidateV2  Operation = "validate_v2"
	OpDelegateV3  Operation = "delegate_v3"
	OpValidateV3  Operation = "validate_v3"
	OpFactcheck   Operation = "factcheck_v3"
)

// The operations a [Handler] answers itself.
const (
	// OpPing answers {"message":"pong"}: GET /api/v1/ping without
	// credentials, and GET /api/v1/x402/ping, the cheapest paid route,
	// with which a client tests its payment set-up end to end.
	OpPing Operation = "ping"
	// OpAbout describes the server without credentials ([About]).
	OpAbout Operation = "about"
	// OpStatus reports sessions and call counts to an authenticated
	// caller ([Status]).
	OpStatus Operation = "status"
)

// Variant is how a call is authorized and paid.
type Variant string

// The variants. The zero value means VariantNormal.
const (
	// VariantNormal is an authenticated call for steady workloads.
	VariantNormal Variant = "normal"
	// VariantTrial is a rate-limited path for evaluation and demos.
	VariantTrial Variant = "trial"
	// VariantX402 is pay-per-call: HTTP 402 with terms, then a paid retry.
	VariantX402 Variant = "x402"
)

// Route is one HTTP route of the router: an operation in a variant.
type Route struct {
	// Op is the operation the route serves.
	Op Operation
	// Variant is how the route is authorized and paid.
	Variant Variant
	// Method is the HTTP method, such as "POST".
	Method string
	// Path is the route's path, appended to {base_url}, such as
	// "/api/v2/trial/validate".
	Path string
	// Alias is true for a second path of the same operation and variant,
	// served alike ("/api/v1/fact-check" beside "/api/v1/factcheck").
	// [RoutePath] returns the other, canonical path.
	Alias bool
	// Public is true for a route of the normal variant that takes no
	// credential: GET /api/v1/ping and GET /api/v1/about. Other normal
	// routes take "Authorization: Bearer <key>"; trial routes take none
	// and are rate limited; x402 routes take a payment.
	Public bool
}

// The variant sets of the route table.
var (
	allVariants  = []Variant{VariantNormal, VariantTrial, VariantX402}
	normalOnly   = []Variant{VariantNormal}
	normalOrPaid = []Variant{VariantNormal, VariantX402}
)

// operations is the route table: each operation with its method, version,
// path name, other names, and variants. It is only read.
//
// Version 3 has no trial or x402 variant: the interface leaves them open and
// the public router documents none, so vouch serves v3 in the normal
// variant only. Factcheck v1 with its alias fact-check, ping, about and
// status are the public router's routes; the public router has no trial
// ping, and about and status exist in the normal variant only.
var operations = [...]struct {
	op       Operation
	method   string
	version  int
	name     string
	aliases  []string
	variants []Variant
	public   bool // the normal variant takes no credential
}{
	{OpDelegateV1, http.MethodPost, 1, "delegate", nil, allVariants, false},
	{OpValidateV1, http.MethodPost, 1, "validate", nil, allVariants, false},
	{OpFactcheckV1, http.MethodPost, 1, "factcheck", []string{"fact-check"}, allVariants, false},
	{OpDelegateV2, http.MethodPost, 2, "delegate", nil, allVariants, false},
	{OpValidateV2, http.MethodPost, 2, "validate", nil, allVariants, false},
	{OpDelegateV3, http.MethodPost, 3, "delegate", nil, normalOnly, false},
	{OpValidateV3, http.MethodPost, 3, "validate", nil, normalOnly, false},
	{OpFactcheck, http.MethodPost, 3, "factcheck", nil, normalOnly, false},
	{OpPing, http.MethodGet, 1, "ping", nil, normalOrPaid, true},
	{OpAbout, http.MethodGet, 1, "about", nil, normalOnly, true},
	{OpStatus, http.MethodGet, 1, "status", nil, normalOnly, false},
	{OpFeedback, http.MethodPost, 3, "feedback", nil, normalOnly, false},
}

// Routes returns every route of the router: delegate and validate v1 and
// v2 in three variants each, the three of version 3, factcheck v1 in
// three variants with the alias of each, and the meta routes ping (normal
// and x402), about and status, and feedback of version 3.
// A route's aliases follow it. The table is computed afresh on each call.
func Routes() []Route {
	var routes []Route
	for _, o := range operations {
		for _, v := range o.variants {
			for i, name := range append([]string{o.name}, o.aliases...) {
				routes = append(routes, Route{
					Op: o.op, Variant: v, Method: o.method, Path: routePath(o.version, v, name),
					Alias: i > 0, Public: o.public && v == VariantNormal,
				})
			}
		}
	}
	return routes
}

// RoutePath returns the canonical path of op in variant v, appended to
// {base_url} ("/api/v2/trial/validate"); ok is false when the operation
// has no such variant. The zero variant means VariantNormal.
func RoutePath(op Operation, v Variant) (path string, ok bool) {
	rt, ok := lookup(op, v)
	return rt.Path, ok
}

// lookup returns the canonical route of op in variant v.
func lookup(op Operation, v Variant) (Route, bool) {
	if v == "" {
		v = VariantNormal
	}
	for _, o := range operations {
		if o.op == op && slices.Contains(o.variants, v) {
			return Route{Op: op, Variant: v, Method: o.method, Path: routePath(o.version, v, o.name),
				Public: o.public && v == VariantNormal}, true
		}
	}
	return Route{}, false
}

// routePath builds "/api/v<version>/<name>", with the variant before the
// name unless it is normal.
func routePath(version int, v Variant, name string) string {
	if v == VariantNormal {
		return fmt.Sprintf("/api/v%d/%s", version, name)
	}
	return fmt.Sprintf("/api/v%d/%s/%s", version, v, name)
}

type variantKey struct{}

// WithVariant returns a context that makes a [Client] call use variant v,
// overriding the client's own.
func WithVariant(ctx context.Context, v Variant) context.Context {
	return context.WithValue(ctx, variantKey{}, v)
}

// VariantFrom returns the variant set by [WithVariant], or "" when none is.
func VariantFrom(ctx context.Context) Variant {
	v, _ := ctx.Value(variantKey{}).(Variant)
	return v
}
