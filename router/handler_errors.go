package router

import (
	"errors"

	"github.com/vouchkit/vouch/internal/httpapi"
)

// Errors of the HTTP side of the package: [Handler], [Client],
// [HTTPWorker] and every [Authenticator]. ErrNoCredentials,
// ErrBadCredentials, ErrResponseTooLarge and ErrMalformedResponse are
// shared with package trust (the same values), whose handler and client
// return them too.
var (
	// ErrNoCredentials is returned by an Authenticator when the request
	// carries no credential. The Handler answers 401.
	ErrNoCredentials = httpapi.ErrNoCredentials
	// ErrBadCredentials is returned by an Authenticator when the request's
	// credential is unknown or malformed. The Handler answers 401.
	ErrBadCredentials = httpapi.ErrBadCredentials
	// ErrNoVariant is returned by a Client call asking for a variant that
	// the operation does not have, such as version 3 in the trial variant.
	ErrNoVariant = errors.New("router: the operation has no such variant")
	// ErrResponseTooLarge is returned when a response body is larger than
	// the limit a Client or an HTTPWorker accepts.
	ErrResponseTooLarge = httpapi.ErrResponseTooLarge
	// ErrMalformedResponse is returned when a successful response cannot
	// be decoded into the expected type.
	ErrMalformedResponse = httpapi.ErrMalformedResponse
)
