package router

import "errors"

// Errors of the HTTP side of the package: [Handler], [Client],
// [HTTPWorker] and the [Authenticator]s.
var (
	// ErrNoCredentials is returned by an Authenticator when the request
	// carries no credential. The Handler answers 401.
	ErrNoCredentials = errors.New("router: no credentials: send Authorization: Bearer <key>")
	// ErrBadCredentials is returned by an Authenticator when the request's
	// credential is unknown or malformed. The Handler answers 401.
	ErrBadCredentials = errors.New("router: the credential is not valid")
	// ErrNoVariant is returned by a Client call asking for a variant that
	// the operation does not have, such as version 3 in the trial variant.
	ErrNoVariant = errors.New("router: the operation has no such variant")
	// ErrResponseTooLarge is returned when a response body is larger than
	// the limit a Client or an HTTPWorker accepts.
	ErrResponseTooLarge = errors.New("router: response body too large")
	// ErrMalformedResponse is returned when a successful response cannot
	// be decoded into the expected type.
	ErrMalformedResponse = errors.New("router: malformed response")
)
