package httpapi

import (
	"context"
	"net/http"
	"strings"
	"time"
)

// Paid endpoints: the caller a paywall admitted, and the answers it can
// deliver again without running the call.

// principalFirst notes the principal of a paid request (see [Principal])
// before calling paywall, the x402 middleware, which binds the answer a
// proof bought to it: a repeat of the proof from another integration, or
// from none, is not the same request and does not get that answer.
func (s *Server) principalFirst(paywall http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		infoFrom(r.Context()).principal = s.identify(r)
		paywall.ServeHTTP(w, r)
	})
}

// paid names the caller of a paid request before calling next.
func (s *Server) paid(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.namePaid(r)
		next.ServeHTTP(w, r)
	})
}

// namePaid notes in r's info that it was paid for and its caller, and
// returns the info. Its principal is the one principalFirst noted before
// the paywall, which wraps every paid endpoint.
//
// The caller is the payer Config.Payer names, "payer:<address>". When it
// names none, the caller is the integration the request's credential
// names ("key:<name>"), or, without one, a name of the request's own,
// "payer:unknown/<request id>": never its client address, which other
// payers behind the same proxy, and anonymous callers, share. Such a
// request keeps no answer for replay and is not accountable, so that
// nothing of it is remembered under a name no one else could take.
func (s *Server) namePaid(r *http.Request) *requestInfo {
	info := infoFrom(r.Context())
	info.paid = true
	if s.cfg.Payer != nil {
		if payer := s.cfg.Payer(r); payer != "" {
			info.caller = "payer:" + strings.ToLower(payer)
			return info
		}
	}
	if info.principal != "" {
		info.caller = "key:" + info.principal
		return info
	}
	if !info.unknownPayer {
		s.log.WarnContext(r.Context(), s.cfg.Name+": the paywall named no payer of a paid request without a credential; its answer is not kept for replay",
			"request_id", info.id)
	}
	info.caller, info.unknownPayer = unknownPayerPrefix+info.id, true
	return info
}

// unknownPayerPrefix begins the caller name of a paid request whose payer
// is unknown: "payer:unknown/" and the request id, which no payer's
// address, credential or other request spells.
const unknownPayerPrefix = "payer:unknown/"

// paidReplayer is the handler a Paid endpoint with Prepare and a body
// gives the x402 middleware. Besides serving the request, it can answer
// a repeat of a settled payment from the idempotency store alone: its
// ServeReplay method (x402.Replayer, matched by shape) never runs the call.
type paidReplayer struct {
	http.Handler // the admitted endpoint
	s            *Server
}

// ServeReplay writes the response stored under the request's
// Idempotency-Key for its caller, method, path and body, with header
// Idempotent-Replayed: true, and reports true; it reports false, writing
// nothing, when there is no such response. It waits for a request with
// the same key that is still running.
func (h *paidReplayer) ServeReplay(w http.ResponseWriter, r *http.Request) bool {
	s, ctx := h.s, r.Context()
	info := s.namePaid(r)
	key, p := IdempotencyKey(r.Header)
	if p != nil || key == "" || info.unknownPayer {
		return false
	}
	body, p := s.readBody(r)
	if p != nil {
		return false
	}
	scoped, fp := info.idempotencyKey(key), fingerprint(r.Method, r.URL.Path, body)
	e, err := s.lookup(ctx, scoped, fp)
	switch {
	case err != nil:
		if ctx.Err() == nil {
			s.log.ErrorContext(ctx, s.cfg.Name+": looking up a paid response", "request_id", info.id, "error", err)
		}
		return false
	case e.State != IdempotencyCompleted || e.Fingerprint != fp:
		return false
	}
	replay(w, r, e.Response)
	return true
}

// looker is an IdempotencyStore that reports what holds a key without
// reserving it: a MemoryIdempotencyStore, whose Reserve makes room for a
// new entry by dropping its caller's oldest answers.
type looker interface {
	lookup(key string, now time.Time) (IdempotencyEntry, bool)
}

// lookup returns the entry that holds scoped, after waiting while a
// request with the fingerprint fp runs under it; the zero entry when none
// holds it. It reserves nothing in a store that can look up a key (see
// looker): a lookup must not drop the caller's own answers to make room
// for an entry it does not store. In another store it reserves the key
// and lets it go at once.
func (s *Server) lookup(ctx context.Context, scoped, fp string) (IdempotencyEntry, error) {
	l, ok := s.cfg.Idempotency.(looker)
	if !ok {
		e, err := s.claim(ctx, scoped, fp)
		if err == nil && e.State == IdempotencyReserved { // nothing stored: let the key go again
			if err := s.cfg.Idempotency.Release(context.WithoutCancel(ctx), scoped, e.Lease); err != nil {
				s.log.ErrorContext(ctx, s.cfg.Name+": releasing idempotency key", "error", err)
			}
			return IdempotencyEntry{}, nil
		}
		return e, err
	}
	for {
		e, found := l.lookup(scoped, s.cfg.Now())
		if !found || e.State != IdempotencyInFlight || e.Fingerprint != fp {
			return e, nil
		}
		if !waitFor(ctx, e.Done) {
			return e, ctx.Err()
		}
	}
}
