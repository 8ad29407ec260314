package router

import (
	"context"
	"fmt"

	"github.com/vouchkit/vouch/internal/problem"
)

// Service runs the router's operations. The in-process [Engine] and the
// remote [Client] both implement it, and [NewHandler] serves any
// implementation over HTTP.
//
// Implementations must be safe for concurrent use. A method must not keep
// or modify the request after it returns. A verdict of INVALID, RETRY or
// NEEDS_SPEC is a result, not an error; errors are *Error (with an HTTP
// status and a machine code) or the context's error. Cancelling ctx stops
// the workers of the call.
type Service interface {
	DelegateV1(ctx context.Context, req *DelegateV1Request) (*DelegateV1Response, error)
	ValidateV1(ctx context.Context, req *ValidateV1Request) (*ValidateV1Response, error)
	DelegateV2(ctx context.Context, req *DelegateV2Request) (*DelegateV2Response, error)
	ValidateV2(ctx context.Context, req *ValidateV2Request) (*ValidateV2Response, error)
	DelegateV3(ctx context.Context, req *DelegateV3Request) (*DelegateV3Response, error)
	ValidateV3(ctx context.Context, req *ValidateV3Request) (*ValidateV3Response, error)
	Factcheck(ctx context.Context, req *FactcheckRequest) (*FactcheckResponse, error)
}

// Error is the error of every operation, on the wire an RFC 9457
// application/problem+json body: HTTP status, machine code, detail, and for
// invalid input the failing fields by JSON path. Use errors.As to reach it.
type Error = problem.Details

// FieldError names one field of a request that failed validation.
type FieldError = problem.FieldError

// Code is the machine-readable code of an [Error].
type Code = problem.Code

// Operation names one operation of [Service].
type Operation string

// The operations.
const (
	OpDelegateV1 Operation = "delegate_v1"
	OpValidateV1 Operation = "validate_v1"
	OpDelegateV2 Operation = "delegate_v2"
	OpValidateV2 Operation = "validate_v2"
	OpDelegateV3 Operation = "delegate_v3"
	OpValidateV3 Operation = "validate_v3"
	OpFactcheck  Operation = "factcheck_v3"
)

// Variant is how a call is authorized and paid (sections 4.1 and 5).
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
	Op      Operation
	Variant Variant
	Method  string
	Path    string
}

// operations lists each operation with its version and path name. Version
// 3 has no trial or x402 variant: the spec leaves them open and the public
// router documents none, so vouch serves v3 in the normal variant only.
var operations = [...]struct {
	op      Operation
	version int
	name    string
}{
	{OpDelegateV1, 1, "delegate"},
	{OpValidateV1, 1, "validate"},
	{OpDelegateV2, 2, "delegate"},
	{OpValidateV2, 2, "validate"},
	{OpDelegateV3, 3, "delegate"},
	{OpValidateV3, 3, "validate"},
	{OpFactcheck, 3, "factcheck"},
}

// Routes returns every route of the router: the twelve of section 4.1 and
// the three of section 4.2. The table is computed afresh on each call.
func Routes() []Route {
	var routes []Route
	for _, o := range operations {
		for _, v := range []Variant{VariantNormal, VariantTrial, VariantX402} {
			if p, ok := RoutePath(o.op, v); ok {
				routes = append(routes, Route{Op: o.op, Variant: v, Method: "POST", Path: p})
			}
		}
	}
	return routes
}

// RoutePath returns the path of op in variant v, appended to {base_url}
// ("/api/v2/trial/validate"); ok is false when the operation has no such
// variant.
func RoutePath(op Operation, v Variant) (path string, ok bool) {
	for _, o := range operations {
		if o.op != op {
			continue
		}
		switch {
		case v == "" || v == VariantNormal:
			return fmt.Sprintf("/api/v%d/%s", o.version, o.name), true
		case o.version < 3 && (v == VariantTrial || v == VariantX402):
			return fmt.Sprintf("/api/v%d/%s/%s", o.version, v, o.name), true
		}
		return "", false
	}
	return "", false
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
