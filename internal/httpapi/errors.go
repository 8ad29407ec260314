package httpapi

import "errors"

// Errors shared by the servers and clients of the project. Package router
// exports them under the same names (router.ErrNoCredentials, ...), and
// package trust uses router's; they are the same values, so errors.Is
// matches whichever package returned them. Their text names the module
// rather than one package for that reason.
var (
	// ErrNoCredentials is returned by an Authenticator when the request
	// carries no credential. The Server answers 401.
	ErrNoCredentials = errors.New("vouch: no credentials: send Authorization: Bearer <key>")
	// ErrBadCredentials is returned by an Authenticator when the request's
	// credential is unknown or malformed. The Server answers 401.
	ErrBadCredentials = errors.New("vouch: the credential is not valid")
	// ErrResponseTooLarge is returned when a response body is larger than
	// the limit a client accepts.
	ErrResponseTooLarge = errors.New("vouch: response body too large")
	// ErrMalformedResponse is returned when a successful response cannot
	// be decoded into the expected type.
	ErrMalformedResponse = errors.New("vouch: malformed response")
)
