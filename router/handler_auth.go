package router

import (
	"net/http"

	"github.com/vouchkit/vouch/internal/httpapi"
)

// Authenticator identifies the caller of a normal-variant request from its
// credentials. It returns a non-empty caller identity (which scopes
// idempotency keys and names the caller in logs), or an error: usually
// [ErrNoCredentials] or [ErrBadCredentials], which the [Handler] answers
// with 401 and a WWW-Authenticate challenge. An *[Error] is answered with
// its own status (503 when a key store is down, say); any other error is
// answered 401.
//
// An Authenticator is called concurrently and must not read the body.
//
// Its definition is shared with trust.NewHandler, which takes the same
// Authenticator: the type is an alias of the project's internal one,
// func(r *http.Request) (caller string, err error).
type Authenticator = httpapi.Authenticator

// BearerToken returns the token of an "Authorization: Bearer <token>"
// header, or ok false when there is none, or more than one Authorization
// header, of which a proxy and the server could each read another. The
// scheme is matched without regard to case (RFC 9110, section 11.1).
func BearerToken(r *http.Request) (token string, ok bool) { return httpapi.BearerToken(r) }

// KeyAuthenticator returns an Authenticator that accepts
// "Authorization: Bearer <key>" for each key of keys and names the caller
// keys[key]; an empty caller name stands for the key's own hash prefix.
// The map is copied. Keys are compared through their SHA-256 digests, so
// lookup time does not depend on how much of a guess matches.
func KeyAuthenticator(keys map[string]string) Authenticator { return httpapi.KeyAuthenticator(keys) }
