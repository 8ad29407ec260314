package httpapi

import (
	"context"
	"errors"
	"net/http"
	"net/netip"
	"strconv"

	"github.com/vouchkit/vouch/internal/fairstore"
	"github.com/vouchkit/vouch/problem"
)

// Admission: who a request is, and whether its endpoint lets it in.

// Access says how an [Endpoint] admits a request.
type Access int

// The access kinds.
const (
	// Key endpoints ask the Authenticator; a refusal is a 401 with a
	// WWW-Authenticate challenge. The caller is "key:<name>".
	Key Access = iota + 1
	// Trial endpoints take no credential and are rate limited per caller
	// by the RateLimiter: 429 with Retry-After over the limit. The caller
	// is what Config.TrialCaller returns.
	Trial
	// Paid endpoints go through the x402 middleware, and answer 501 with
	// code x402_not_configured when there is none. The caller is the
	// payer, "payer:<address>" in lower case, as Config.Payer names it.
	// When it names none, the caller is the request's credential's
	// ("key:<name>"), or, without one, "payer:unknown/<request id>": a
	// request of its own, whose answer is not kept for replay and which
	// is not Accountable, never its client address, which other payers
	// and anonymous callers behind the same proxy share. The handler the middleware
	// wraps for an endpoint with Prepare and a body also has a method
	// ServeReplay(w, r) bool (x402.Replayer): it writes the response
	// stored under the request's Idempotency-Key for the same caller and
	// body, as a replay, and never runs the call nor, in a
	// MemoryIdempotencyStore, reserves the key, so that the middleware
	// can deliver a settled answer that was lost again without settling
	// again.
	Paid
	// Public endpoints admit everyone. The caller is "ip:<address>".
	//
	// The address is the peer's (RemoteAddr), or, when the peer is one of
	// Config.TrustedProxies, the client address the proxies name.
	Public
)

// authenticated asks the Authenticator before calling next.
func (s *Server) authenticated(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		caller, err := "", ErrNoCredentials
		if s.cfg.Authenticator != nil {
			caller, err = s.cfg.Authenticator(r)
		}
		if err == nil && caller == "" {
			err = ErrBadCredentials
		}
		if err != nil {
			WriteAuthError(w, r, err)
			return
		}
		info := infoFrom(r.Context())
		info.caller, info.principal = "key:"+caller, caller
		next.ServeHTTP(w, r)
	})
}

// limited asks the RateLimiter before calling next.
func (s *Server) limited(next http.Handler) http.Handler {
	prefix := s.cfg.TrialLimit.IPv6Prefix
	if prefix == 0 {
		prefix = DefaultTrialIPv6Prefix
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := s.identify(r)
		addr := clientAddr(r, s.cfg.proxies())
		caller := "ip:" + s.clientIP(r, addr)
		limitKey := caller
		named := ""
		if s.cfg.TrialCaller != nil {
			named = s.cfg.TrialCaller(r)
		}
		if named == caller || name != "" && named == "key:"+name {
			named = "" // its own address or credential: the default caller
		} else if err := checkTrialCallerName(named); err != nil {
			s.log.WarnContext(r.Context(), s.cfg.Name+": the TrialCaller named a request as the server names other callers; it is served as its default caller",
				"request_id", infoFrom(r.Context()).id, "error", err)
			named = ""
		}
		switch {
		case named != "":
			caller = named
			limitKey = caller
		case name != "":
			caller = "key:" + name
			limitKey = caller
		case addr.IsValid():
			limitKey = fairstore.OwnerOf(caller, prefix)
		}
		ok, wait, err := s.limit.Allow(r.Context(), limitKey, s.cfg.Now())
		s.tel.trial(r.Context(), ok, err)
		if err != nil {
			var p *problem.Details
			if !errors.As(err, &p) {
				s.log.ErrorContext(r.Context(), s.cfg.Name+": rate limiter failed", "request_id", infoFrom(r.Context()).id, "error", err)
				p = problem.New(http.StatusServiceUnavailable, problem.CodeUnavailable, "the trial rate limit cannot be checked; retry later")
			}
			WriteProblem(w, r, p)
			return
		}
		if !ok {
			secs := retryAfterSeconds(wait)
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			WriteProblem(w, r, problem.Newf(http.StatusTooManyRequests, problem.CodeRateLimited,
				"trial rate limit reached; retry in %d s, or use the normal route with an API key", secs))
			return
		}
		info := infoFrom(r.Context())
		info.caller, info.principal, info.trial = caller, name, true
		next.ServeHTTP(w, r)
	})
}

// anonymous names the caller by its address before calling next, and
// notes the principal when the request carries a credential the
// Authenticator accepts.
func (s *Server) anonymous(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info := infoFrom(r.Context())
		info.caller, info.principal = "ip:"+s.clientIP(r, clientAddr(r, s.cfg.proxies())), s.identify(r)
		next.ServeHTTP(w, r)
	})
}

// identify returns the name the Authenticator gives the request's
// credential, or "" when there is none or it is refused. The
// Authenticator is asked whatever headers the request carries: one may
// read its credential from another header than Authorization.
func (s *Server) identify(r *http.Request) string {
	if s.cfg.Authenticator == nil {
		return ""
	}
	name, err := s.cfg.Authenticator(r)
	if err != nil {
		return ""
	}
	return name
}

// clientIP returns the client address addr as text, or the host part of
// RemoteAddr when it holds no IP address.
func (s *Server) clientIP(r *http.Request, addr netip.Addr) string {
	if addr.IsValid() {
		return addr.String()
	}
	return ClientIP(r)
}

// requestInfo is what the Server learns about a request as it goes.
type requestInfo struct {
	id, trace, caller, principal string
	paid                         bool // admitted by a paywall
	unknownPayer                 bool // paid, by a payer named neither by the paywall nor by a credential
	trial                        bool // admitted by the trial rate limit
	replayed                     bool
}

type requestInfoKey struct{}

// infoFrom returns the request's info; a request served outside ServeHTTP
// (a middleware calling an endpoint directly) gets a fresh one.
func infoFrom(ctx context.Context) *requestInfo {
	if info, ok := ctx.Value(requestInfoKey{}).(*requestInfo); ok {
		return info
	}
	return &requestInfo{}
}

// Principal returns, from the context of a request the Server admitted,
// the name the Authenticator gave its caller: always set on a [Key]
// endpoint, and on the others when the request carries a credential the
// Authenticator accepts. It is "" otherwise.
func Principal(ctx context.Context) string {
	if info, ok := ctx.Value(requestInfoKey{}).(*requestInfo); ok {
		return info.principal
	}
	return ""
}

// TrialOwnerPrefix begins the name of the owner of a trial call (see
// [Owner]): "trial:" and its caller.
const TrialOwnerPrefix = "trial:"

// Owner returns, from the context of a request the Server admitted, the
// name of the integration that owns the call it makes: who owns its
// receipts and alone may report its outcome. On a Trial endpoint it is
// [TrialOwnerPrefix] and the request's Caller, whatever credential the
// request carries: a trial call teaches nothing, so it is never a
// credential's call, which its holder could report on or fetch the
// receipt of on an authenticated route, nor is a credential's call a
// trial caller's. On the other endpoints it is the Principal when there
// is one, else the Caller. It is "" outside a request.
func Owner(ctx context.Context) string {
	info, ok := ctx.Value(requestInfoKey{}).(*requestInfo)
	switch {
	case !ok:
		return ""
	case info.trial:
		return TrialOwnerPrefix + info.caller
	case info.principal != "":
		return info.principal
	}
	return info.caller
}

// Accountable reports whether the call of ctx is made by a caller that
// answers for it: one a credential the Authenticator accepts names on a
// Key, Paid or Public endpoint, or a payer on a Paid one; not a Trial
// request (with a credential or without), nor an anonymous one, nor a
// paid one whose payer neither Config.Payer nor a credential names. Outside
// a request the Server admitted it reports true: an in-process call of
// the host.
func Accountable(ctx context.Context) bool {
	info, ok := ctx.Value(requestInfoKey{}).(*requestInfo)
	if !ok {
		return true
	}
	return !info.trial && !info.unknownPayer && (info.paid || info.principal != "")
}

// AnswerTrace records traceID as the trace id the answer of the request
// of ctx carries, so that the request's log line names the id its caller
// holds: an endpoint whose call makes a trace id of its own when the
// request sent no traceparent (the trust call's trace_id) calls it with
// the answer's. Outside a request the Server serves it does nothing.
func AnswerTrace(ctx context.Context, traceID string) {
	if info, ok := ctx.Value(requestInfoKey{}).(*requestInfo); ok && traceID != "" {
		info.trace = traceID
	}
}

// Caller returns, from the context of a request the Server admitted, the
// identity that scopes its idempotency keys and names it in logs:
// "key:<name>" on a Key endpoint, "payer:<address>" on a Paid one (or,
// when Config.Payer names no payer, "key:<name>" of the request's
// credential, or "payer:unknown/<request id>" without one),
// "ip:<address>" on a Public one, and on a Trial one what
// Config.TrialCaller returns ("key:<name>" or "ip:<address>" by default).
// It is "" outside a request.
func Caller(ctx context.Context) string {
	if info, ok := ctx.Value(requestInfoKey{}).(*requestInfo); ok {
		return info.caller
	}
	return ""
}

// scope is what keeps the request's idempotency keys apart from other
// callers': its caller, and its principal whenever there is one that the
// caller does not already name (a public request, known by its address,
// which integrations behind one proxy share; a payer paying with
// several integrations' credentials).
func (info *requestInfo) scope() string {
	if info.principal == "" || info.caller == "key:"+info.principal {
		return info.caller
	}
	return info.caller + " key:" + info.principal
}
