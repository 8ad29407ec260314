package httpapi

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/vouchkit/vouch/problem"
)

// Authenticator identifies the caller of a request to a [Key] endpoint
// from its credentials. It returns a non-empty caller identity (which
// scopes idempotency keys and names the caller in logs), or an error:
// usually [ErrNoCredentials] or [ErrBadCredentials], which the [Server]
// answers with 401 and a WWW-Authenticate challenge. A *problem.Details is
// answered with its own status (503 when a key store is down, say); any
// other error is answered 401.
//
// An Authenticator is called concurrently and must not read the body.
type Authenticator func(r *http.Request) (caller string, err error)

// BearerToken returns the token of an "Authorization: Bearer <token>"
// header, or ok false when there is none, or more than one Authorization
// header, of which a proxy and the server could each read another. The
// scheme is matched without regard to case (RFC 9110, section 11.1).
func BearerToken(r *http.Request) (token string, ok bool) {
	vals := r.Header.Values("Authorization")
	if len(vals) != 1 {
		return "", false
	}
	scheme, token, found := strings.Cut(vals[0], " ")
	if !found || !strings.EqualFold(scheme, "Bearer") {
		return "", false
	}
	token = strings.TrimSpace(token)
	return token, token != ""
}

// KeyAuthenticator returns an Authenticator that accepts
// "Authorization: Bearer <key>" for each key of keys and names the caller
// keys[key]; an empty caller name stands for the key's own hash prefix.
// The map is copied. Keys are compared through their SHA-256 digests, so
// lookup time does not depend on how much of a guess matches.
func KeyAuthenticator(keys map[string]string) Authenticator {
	byDigest := make(map[[32]byte]string, len(keys))
	for k, caller := range keys {
		d := sha256.Sum256([]byte(k))
		if caller == "" {
			caller = "key:" + hex.EncodeToString(d[:6])
		}
		byDigest[d] = caller
	}
	return func(r *http.Request) (string, error) {
		switch vals := r.Header.Values("Authorization"); {
		case len(vals) == 0 || len(vals) == 1 && vals[0] == "":
			return "", ErrNoCredentials
		case len(vals) > 1:
			return "", errManyCredentials
		}
		token, ok := BearerToken(r)
		if !ok {
			return "", errNotBearer
		}
		caller, ok := byDigest[sha256.Sum256([]byte(token))]
		if !ok {
			return "", ErrBadCredentials
		}
		return caller, nil
	}
}

// errNotBearer is the credential of an Authorization header of another
// scheme than Bearer, such as a bare key: ErrBadCredentials, answered with
// a detail that says what to send (RFC 6750, section 3.1: invalid_request).
var errNotBearer = fmt.Errorf("%w: the Authorization header is not \"Bearer <key>\"", ErrBadCredentials)

// errManyCredentials is the credential of a request that sends the
// Authorization header more than once: ErrBadCredentials, whichever copy
// is right, since a proxy before the server may have read another
// (RFC 6750, section 3.1: invalid_request).
var errManyCredentials = fmt.Errorf("%w: the Authorization header is sent more than once", ErrBadCredentials)

// WriteAuthError answers a request whose credential the Authenticator
// refused with err: with err's own problem when it is a
// *problem.Details, else with the 401 problem and a WWW-Authenticate
// challenge, which says invalid_token unless no credential was sent
// ([ErrNoCredentials]).
func WriteAuthError(w http.ResponseWriter, r *http.Request, err error) {
	var p *problem.Details
	if errors.As(err, &p) {
		WriteProblem(w, r, p)
		return
	}
	challenge := `Bearer realm="vouch"`
	detail := "missing credentials: send Authorization: Bearer <key>"
	switch {
	case errors.Is(err, errNotBearer):
		challenge += `, error="invalid_request"`
		detail = `the Authorization header is not "Bearer <key>": put "Bearer " before the key`
	case errors.Is(err, errManyCredentials):
		challenge += `, error="invalid_request"`
		detail = "the Authorization header is sent more than once: send one credential"
	case !errors.Is(err, ErrNoCredentials):
		challenge += `, error="invalid_token"`
		detail = "the credential is not valid"
	}
	w.Header().Set("WWW-Authenticate", challenge)
	WriteProblem(w, r, problem.New(http.StatusUnauthorized, problem.CodeUnauthorized, detail))
}

// LocalCaller names the caller of an in-process call whose context names
// none (router.DefaultCaller).
const LocalCaller = "local"

// CheckCredentialName returns an error when name, the name an
// Authenticator (or an MCP token verifier) gives a credential, is spelt as
// a door names a caller it knows by no credential: "ip:" and a client
// address, "payer:" and a payer's address, or [LocalCaller], the host's
// own in-process calls, or "trial:" and a trial caller's name, the owner
// of its trial calls (see [Owner]). The trust calls, receipts, reports
// and kept answers of a caller are found by its name, so a credential of
// such a name would share that caller's; the doors refuse it, as a
// mistake of the server's configuration.
func CheckCredentialName(name string) error {
	if strings.HasPrefix(name, "ip:") || strings.HasPrefix(name, "payer:") {
		return fmt.Errorf("the credential's name %q is spelt as an anonymous caller's (ip:<address>) or a payer's (payer:<address>), whose calls, receipts and kept answers it would share: name the credential otherwise", name)
	}
	if strings.HasPrefix(name, TrialOwnerPrefix) {
		return fmt.Errorf("the credential's name %q is spelt as the owner of a trial caller's calls (trial:<caller>), whose receipts and reports it would share: name the credential otherwise", name)
	}
	if name == LocalCaller {
		return fmt.Errorf("the credential's name %q is the name of the host's own in-process calls, whose receipts and reports it would share: name the credential otherwise", name)
	}
	return nil
}

// checkTrialCallerName returns an error when name, the name
// Config.TrialCaller gives a request, is spelt as the server names a
// caller itself: "key:" and a credential's name, which only a request
// carrying that credential is, a name CheckCredentialName refuses, or a
// name that holds a space, which joins a caller and its credential's name
// in the scope of its idempotency keys. A TrialCaller often passes on what the client sent (a session header),
// and a client so named would share that caller's trial allowance and
// kept answers. It also returns an error when name is not valid UTF-8
// without NUL, which a header value may be but no receipt, and no
// PostgreSQL text column of a shared store, holds: the call would run and
// then fail for good as it is recorded.
func checkTrialCallerName(name string) error {
	if !utf8.ValidString(name) || strings.ContainsRune(name, 0) {
		return fmt.Errorf("the trial caller's name %q is not valid UTF-8 without NUL, which the receipts and shared stores that name the caller cannot hold", name)
	}
	if strings.Contains(name, " ") {
		return fmt.Errorf("the trial caller's name %q holds a space, which joins a caller and the credential it carries (<caller> key:<name>) in the scope of kept answers: it would share the kept answers of a caller so named that carries that credential", name)
	}
	if strings.HasPrefix(name, "key:") {
		return fmt.Errorf("the trial caller's name %q is spelt as the caller of a credential (key:<name>), whose trial allowance and kept answers it would share", name)
	}
	if err := CheckCredentialName(name); err != nil {
		return fmt.Errorf("the trial caller's name %q is spelt as a caller the server names itself (ip:<address>, payer:<address>, trial:<caller> or %s), whose trial allowance and kept answers it would share", name, LocalCaller)
	}
	return nil
}

// checkedAuthenticator wraps a: a credential whose name
// CheckCredentialName refuses is answered 500, the mistake logged to log.
func checkedAuthenticator(a Authenticator, log *slog.Logger) Authenticator {
	return func(r *http.Request) (string, error) {
		name, err := a(r)
		if err != nil {
			return name, err
		}
		if err := CheckCredentialName(name); err != nil {
			log.ErrorContext(r.Context(), "the Authenticator named a credential as the server names callers without one", "error", err)
			return "", CredentialNameProblem()
		}
		return name, nil
	}
}

// CredentialNameProblem is the answer to a credential whose name
// CheckCredentialName refuses: 500, the server's mistake, which the
// client cannot mend.
func CredentialNameProblem() *problem.Details {
	return problem.New(http.StatusInternalServerError, problem.CodeInternal,
		"the server names this credential as it names callers without one; its operator must rename the credential")
}
