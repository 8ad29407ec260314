package httpapi

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/vouchkit/vouch/problem"
)

// Idempotency: run a call once per key, and replay its kept response.

// serveIdempotent runs the call under the idempotency key, or replays the
// response stored under it.
func (s *Server) serveIdempotent(w http.ResponseWriter, r *http.Request, key string, body []byte, run Run) {
	ctx := r.Context()
	scoped, fp := infoFrom(ctx).idempotencyKey(key), fingerprint(r.Method, r.URL.Path, body)
	e, err := s.claim(ctx, scoped, fp)
	switch {
	case err != nil:
		WriteProblem(w, r, s.storeProblem(r, fmt.Errorf("%s: reserving idempotency key: %w", s.cfg.Name, err)))
	case e.State != IdempotencyReserved && e.Fingerprint != fp:
		s.tel.idempotency(ctx, "conflict")
		WriteProblem(w, r, problem.New(http.StatusUnprocessableEntity, problem.CodeUnprocessable,
			"Idempotency-Key was already used with another request; use a new key for a new request"))
	case e.State == IdempotencyCompleted:
		s.tel.idempotency(ctx, "replayed")
		replay(w, r, e.Response)
	default:
		s.tel.idempotency(ctx, "executed")
		s.runReserved(w, r, scoped, e.Lease, run)
	}
}

// claim reserves scoped for the request whose fingerprint is fp, or
// returns the entry that holds it, after waiting while a request with the
// same fingerprint runs under it. The error is the store's or ctx's.
func (s *Server) claim(ctx context.Context, scoped, fp string) (IdempotencyEntry, error) {
	for {
		now := s.cfg.Now()
		e, err := s.cfg.Idempotency.Reserve(ctx, scoped, fp, now, now.Add(s.cfg.IdempotencyWindow))
		if err != nil || e.State != IdempotencyInFlight || e.Fingerprint != fp {
			return e, err
		}
		if !waitFor(ctx, e.Done) {
			return e, ctx.Err()
		}
	}
}

// storeProblem is the problem that answers r when reserving its
// Idempotency-Key failed with err: the store's own problem, or r's end as
// toProblem tells it, and otherwise 503 unavailable, as for any store out
// of reach (a database that is down): nothing ran, and the request may be
// sent again.
func (s *Server) storeProblem(r *http.Request, err error) *problem.Details {
	var p *problem.Details
	if errors.As(err, &p) || r.Context().Err() != nil {
		return s.toProblem(r, err)
	}
	s.log.ErrorContext(r.Context(), s.cfg.Name+": idempotency store failed", "request_id", infoFrom(r.Context()).id, "error", err)
	return problem.New(http.StatusServiceUnavailable, problem.CodeUnavailable, "the idempotency store cannot be reached; retry later")
}

// replay answers r with the response stored for an earlier request with
// the same key, marked Idempotent-Replayed: true.
func replay(w http.ResponseWriter, r *http.Request, resp *StoredResponse) {
	infoFrom(r.Context()).replayed = true
	w.Header().Set(HeaderIdempotentReplayed, "true")
	writeStored(w, resp)
}

// runReserved runs the call under a key this request reserved, stores the
// response unless it is a 5xx or a refusal (see refusal), and releases
// the key otherwise (also when the call panics). The response of a paid request whose payment the
// paywall settles after the call is stored only once it settled
// (Config.AfterSettle), and released otherwise: an answer is never kept,
// nor counted against the store's bounds, for a payment that did not pay
// for it, and the retry of a call whose payment failed runs anew.
func (s *Server) runReserved(w http.ResponseWriter, r *http.Request, scoped, lease string, run Run) {
	bg := context.WithoutCancel(r.Context())
	held := false // by this function; the paywall ends it otherwise
	defer func() {
		if !held {
			s.release(bg, scoped, lease)
		}
	}()
	resp := s.execute(r, run)
	if resp.Status < 500 && !refusal(resp.Status) {
		keep := func(paid bool) {
			if !paid {
				s.release(bg, scoped, lease)
				return
			}
			if err := s.cfg.Idempotency.Complete(bg, scoped, lease, resp, s.cfg.Now()); err != nil {
				s.log.ErrorContext(bg, s.cfg.Name+": storing idempotent response", "error", err)
				s.release(bg, scoped, lease)
			}
		}
		held = infoFrom(r.Context()).paid && s.cfg.AfterSettle != nil && s.cfg.AfterSettle(r.Context(), keep)
		if !held {
			if err := s.cfg.Idempotency.Complete(bg, scoped, lease, resp, s.cfg.Now()); err != nil {
				s.log.ErrorContext(bg, s.cfg.Name+": storing idempotent response", "error", err)
			} else {
				held = true
			}
		}
	}
	writeStored(w, resp)
}

// refusal reports whether status answers a request refused before
// anything of it ran: 400 (a Service refuses a body it cannot serve as
// sent, such as a session it does not have, before running it), 401,
// 413 or 415. Such an answer is not kept, as the refusals of the
// Server's own checks are not, so that the corrected request sent under
// the same Idempotency-Key runs rather than being answered 422.
func refusal(status int) bool {
	switch status {
	case http.StatusBadRequest, http.StatusUnauthorized, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType:
		return true
	}
	return false
}

// release forgets the key scoped held under lease.
func (s *Server) release(ctx context.Context, scoped, lease string) {
	if err := s.cfg.Idempotency.Release(ctx, scoped, lease); err != nil {
		s.log.ErrorContext(ctx, s.cfg.Name+": releasing idempotency key", "error", err)
	}
}

// waitFor waits until done is closed, or a short while when done is nil
// (the store cannot notify), or ctx ends; it reports whether ctx is alive.
func waitFor(ctx context.Context, done <-chan struct{}) bool {
	var tick <-chan time.Time
	if done == nil {
		t := time.NewTimer(50 * time.Millisecond)
		defer t.Stop()
		tick = t.C
	}
	select {
	case <-done:
	case <-tick:
	case <-ctx.Done():
		return false
	}
	return true
}

// idempotencyKey is the key the request's Idempotency-Key is kept under:
// in its scope, and apart from unpaid requests' when it was paid for.
func (info *requestInfo) idempotencyKey(key string) string {
	if info.paid {
		return paidKeyPrefix + scopedKey(info.scope(), key)
	}
	return scopedKey(info.scope(), key)
}

// scopedKey is the idempotency key of key sent in scope.
func scopedKey(scope, key string) string {
	return strconv.Itoa(len(scope)) + ":" + scope + ":" + key
}

// IdempotencyKey returns the Idempotency-Key of h, "" when h has none, or
// the 400 problem naming the header of one that is sent empty (rule
// "required"), more than once ("unique"), or not 1 to 255 visible ASCII
// characters ("pattern"): such a header is refused rather than read
// as no key, or as its first copy, so that a retry never runs the call
// again for want of a key the client thought it sent.
func IdempotencyKey(h http.Header) (string, *problem.Details) {
	key, p := OneHeader(h, HeaderIdempotencyKey)
	_, sent := h[HeaderIdempotencyKey]
	switch {
	case p != nil || !sent:
		return "", p
	case key == "":
		return "", HeaderProblem(HeaderIdempotencyKey, "required",
			"is empty; send 1 to 255 visible ASCII characters, or no Idempotency-Key header")
	case !validIdempotencyKey(key):
		return "", HeaderProblem(HeaderIdempotencyKey, "pattern", "must be 1 to 255 visible ASCII characters")
	}
	return key, nil
}

// validIdempotencyKey reports whether key is 1 to 255 visible ASCII
// characters.
func validIdempotencyKey(key string) bool {
	if len(key) == 0 || len(key) > 255 {
		return false
	}
	for i := 0; i < len(key); i++ {
		if key[i] < 0x21 || key[i] > 0x7e {
			return false
		}
	}
	return true
}

func fingerprint(method, path string, body []byte) string {
	d := sha256.New()
	io.WriteString(d, method+" "+path+"\n")
	d.Write(body)
	return hex.EncodeToString(d.Sum(nil))
}
