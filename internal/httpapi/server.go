package httpapi

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"net/netip"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/vouchkit/vouch/internal/problem"
	"github.com/vouchkit/vouch/internal/traceparent"
	"github.com/vouchkit/vouch/x402"
)

// Header names the Server and the Client use.
const (
	// HeaderRequestID carries the server's id of a request on every
	// response; problem bodies repeat it as request_id.
	HeaderRequestID = "X-Request-Id"
	// HeaderIdempotencyKey carries the caller's key that makes a POST
	// safe to repeat.
	HeaderIdempotencyKey = "Idempotency-Key"
	// HeaderIdempotentReplayed is "true" on a response replayed from an
	// earlier request with the same Idempotency-Key.
	HeaderIdempotentReplayed = "Idempotent-Replayed"
)

// CodeX402NotConfigured is the code of the 501 problem that a [Paid]
// endpoint answers when the Server has no x402 middleware.
const CodeX402NotConfigured problem.Code = "x402_not_configured"

// DefaultMaxBodyBytes is the request body limit unless told otherwise.
const DefaultMaxBodyBytes = 1 << 20

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
	// payer, "payer:<address>" in lower case, as the facilitator reported
	// it ("ip:<address>" when it reported none). The handler the middleware wraps for an endpoint
	// with Prepare and a body also has a method ServeReplay(w, r) bool
	// (x402.Replayer): it writes the response stored under the request's
	// Idempotency-Key for the same caller and body, as a replay, and never
	// runs the call, so that the middleware can deliver a settled answer
	// that was lost again without settling again.
	Paid
	// Public endpoints admit everyone. The caller is "ip:<address>".
	//
	// The address is the peer's (RemoteAddr), or, when the peer is one of
	// Config.TrustedProxies, the client address the proxies name.
	Public
)

// Run runs one decoded request. Its answer is encoded as the JSON body of
// a 200; its error becomes a problem (see [Server]).
type Run func(ctx context.Context) (any, error)

// Endpoint is one route of a [Server]. Exactly one of Prepare and Handler
// is set.
type Endpoint struct {
	// Method is the HTTP method ("POST", "GET"). A GET endpoint also
	// serves HEAD.
	Method string
	// Path is an http.ServeMux path pattern, which may hold wildcards
	// ("/api/v4/receipt/{receipt_id}").
	Path string
	// Access says who may call the endpoint.
	Access Access
	// Prepare decodes and validates a request and returns the call to run.
	// For a method with a body (POST, PUT, PATCH) the Server first checks
	// that the body is JSON and reads it, bounded, into body; otherwise
	// body is nil. A returned error becomes a problem; Prepare must not
	// have side effects, since a replayed request never reaches Run.
	Prepare func(r *http.Request, body []byte) (Run, error)
	// Handler serves an admitted request itself: the Server adds the
	// request id, traceparent, access check, panic recovery and logging,
	// but neither reads the body nor replays by Idempotency-Key.
	Handler http.Handler
}

// Config configures a [Server]. Zero members mean the defaults documented
// on each.
type Config struct {
	// Name prefixes log messages and errors ("router", "trust").
	Name string
	// Endpoints lists the routes served.
	Endpoints []Endpoint
	// Authenticator identifies the callers of Key endpoints. Nil refuses
	// every such request with 401.
	Authenticator Authenticator
	// TrialCaller tells trial callers apart. Nil means the caller the
	// Authenticator names ("key:<name>") when the request carries a
	// credential it accepts, and otherwise "ip:" and the client address;
	// the rate limit then groups IPv6 addresses by TrialLimit.IPv6Prefix.
	TrialCaller func(*http.Request) string
	// TrustedProxies lists the reverse proxies whose client address
	// headers are believed. Nil (the default) believes none: the client
	// address is the peer's, which behind a proxy makes every client one
	// caller. When the peer is in one of the prefixes, the client address
	// is read from Forwarded (RFC 7239), or X-Forwarded-For when there is
	// none, from the right, skipping the hops that are trusted proxies
	// too. List only proxies that overwrite or append to these headers:
	// a client that reaches the server directly from a trusted address
	// could name any address.
	TrustedProxies []netip.Prefix
	// RateLimiter limits the callers of Trial endpoints. Nil means a token
	// bucket per caller set by TrialLimit; setting both is an error.
	RateLimiter RateLimiter
	// TrialLimit sets the default RateLimiter; zero members mean the
	// defaults.
	TrialLimit TrialLimit
	// X402 guards Paid endpoints: it answers 402 with payment terms,
	// verifies the proof and settles, and calls the handler it wraps for
	// a paid request. Nil answers 501.
	X402 func(http.Handler) http.Handler
	// Idempotency keeps responses for replay; nil means a new
	// MemoryIdempotencyStore.
	Idempotency IdempotencyStore
	// IdempotencyWindow is how long a response is kept; zero means
	// DefaultIdempotencyWindow.
	IdempotencyWindow time.Duration
	// MaxBodyBytes is the largest request body accepted; zero means
	// DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// Logger receives one line per request; nil is silent.
	Logger *slog.Logger
	// Now is the clock of rate limits and idempotency windows; nil means
	// time.Now.
	Now func() time.Time
	// TracerProvider and MeterProvider receive a server span per request
	// and the HTTP server metrics; nil means the global providers.
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
}

// Server serves a table of JSON endpoints. For every request it:
//
//   - sets X-Request-Id on the response (problem bodies repeat it as
//     request_id); when the request has a valid W3C traceparent, echoes
//     one with the same trace id and flags and a new span id, and puts the
//     trace id in the request's context (traceparent.With);
//   - answers 404 for a path it does not serve, 405 with Allow for another
//     method, and, for an endpoint with Prepare and a body, 415 unless the
//     body is JSON (application/json or a +json type), 413 for a body over
//     the limit, and the problem Prepare returns (400 naming the JSON
//     field path for invalid input);
//   - admits the request by the endpoint's [Access];
//   - with an Idempotency-Key header (1 to 255 visible ASCII characters)
//     on an endpoint with Prepare and a body, answers a repeat from the
//     same caller within the window with the first response (same status
//     and body, header Idempotent-Replayed: true) without running it
//     again. A repeat that arrives while the first still runs waits for
//     it; the same key with another method, path or body is answered 422.
//     Keys are scoped by caller (see [Caller]): one caller never gets
//     another's kept answer. Responses with a 5xx status are not kept,
//     so a retry after a server failure runs again; a request whose
//     client disconnects is cancelled (503, not kept), and its
//     reservation is released on a context detached from the client's,
//     so that its retry runs anew;
//   - maps Run's error: a *problem.Details to its own status, a context
//     deadline to 504, a cancelled request to 503, anything else to a 500
//     that reveals nothing of it (the logger gets the error). A panic is
//     answered 500 and logged, as net/http confines a handler's panic to
//     its request.
//
// A Server is safe for concurrent use. Build it with [NewServer].
type Server struct {
	cfg   Config
	mux   *http.ServeMux
	limit RateLimiter
	log   *slog.Logger
	tel   *serverTelemetry
}

// NewServer returns a Server for cfg. It fails when an option is out of
// range (a negative body limit or window, a negative trial rate or burst),
// when both a RateLimiter and a TrialLimit are set, or when an endpoint is
// malformed.
func NewServer(cfg Config) (*Server, error) {
	switch {
	case cfg.MaxBodyBytes < 0:
		return nil, fmt.Errorf("body limit %d is negative", cfg.MaxBodyBytes)
	case cfg.IdempotencyWindow < 0:
		return nil, fmt.Errorf("idempotency window %s is negative", cfg.IdempotencyWindow)
	case cfg.TrialLimit.Rate < 0 || cfg.TrialLimit.Burst < 0 || cfg.TrialLimit.MaxCallers < 0:
		return nil, fmt.Errorf("trial limit %+v has a negative member", cfg.TrialLimit)
	case cfg.TrialLimit.IPv6Prefix < 0 || cfg.TrialLimit.IPv6Prefix > 128:
		return nil, fmt.Errorf("trial limit IPv6 prefix /%d is not between 0 and 128", cfg.TrialLimit.IPv6Prefix)
	case cfg.RateLimiter != nil && cfg.TrialLimit != TrialLimit{IPv6Prefix: cfg.TrialLimit.IPv6Prefix}:
		return nil, errors.New("both a rate limiter and a trial limit are set; set the limits in the rate limiter")
	}
	if cfg.MaxBodyBytes == 0 {
		cfg.MaxBodyBytes = DefaultMaxBodyBytes
	}
	if cfg.IdempotencyWindow == 0 {
		cfg.IdempotencyWindow = DefaultIdempotencyWindow
	}
	if cfg.Idempotency == nil {
		cfg.Idempotency = &MemoryIdempotencyStore{}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Server{cfg: cfg, log: cfg.Logger, limit: cfg.RateLimiter, tel: newServerTelemetry(&cfg)}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.limit == nil {
		s.limit = newLimiters(cfg.TrialLimit.withDefaults())
	}

	s.mux = http.NewServeMux()
	allowed := make(map[string][]string)
	var paths []string
	for _, e := range cfg.Endpoints {
		h, err := s.endpoint(e)
		if err != nil {
			return nil, err
		}
		s.mux.Handle(e.Method+" "+e.Path, h)
		if allowed[e.Path] == nil {
			paths = append(paths, e.Path)
		}
		allowed[e.Path] = append(allowed[e.Path], e.Method)
		if e.Method == http.MethodGet {
			allowed[e.Path] = append(allowed[e.Path], http.MethodHead)
		}
	}
	for _, path := range paths {
		s.mux.Handle(path, methodNotAllowed(allowed[path]))
	}
	s.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		WriteProblem(w, r, problem.Newf(http.StatusNotFound, problem.CodeNotFound, "no route %s", r.URL.Path))
	})
	return s, nil
}

// endpoint returns the handler of e: its access gate around its work.
func (s *Server) endpoint(e Endpoint) (http.Handler, error) {
	if e.Method == "" || e.Path == "" || (e.Prepare == nil) == (e.Handler == nil) {
		return nil, fmt.Errorf("endpoint %s %s: want a method, a path, and one of Prepare and Handler", e.Method, e.Path)
	}
	next := e.Handler
	hasBody := e.Method == http.MethodPost || e.Method == http.MethodPut || e.Method == http.MethodPatch
	if e.Prepare != nil {
		prepare := e.Prepare
		next = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { s.serve(w, r, prepare, hasBody) })
	}
	switch e.Access {
	case Key:
		return s.authenticated(next), nil
	case Trial:
		return s.limited(next), nil
	case Paid:
		if s.cfg.X402 == nil {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				WriteProblem(w, r, problem.New(http.StatusNotImplemented, CodeX402NotConfigured,
					"x402 not configured: this server takes no pay-per-call requests; use the normal or trial route"))
			}), nil
		}
		if e.Prepare != nil && hasBody {
			return s.cfg.X402(&paidReplayer{Handler: s.paid(next), s: s}), nil
		}
		return s.cfg.X402(s.paid(next)), nil
	case Public:
		return s.anonymous(next), nil
	}
	return nil, fmt.Errorf("endpoint %s %s: unknown access %d", e.Method, e.Path, e.Access)
}

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := s.cfg.Now()
	info := &requestInfo{id: newRequestID()}
	sw := &statusWriter{ResponseWriter: w}
	sw.Header().Set(HeaderRequestID, info.id)
	ctx := context.WithValue(r.Context(), requestInfoKey{}, info)
	if raw := r.Header.Get(traceparent.Header); raw != "" {
		if trace, _, ok := traceparent.Parse(raw); ok {
			info.trace = trace
			sw.Header().Set(traceparent.Header, echoTraceparent(trace, raw))
			ctx = traceparent.With(ctx, trace)
		}
	}
	ctx, sv := s.tel.start(ctx, r)
	r = r.WithContext(ctx)

	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			s.log.ErrorContext(ctx, s.cfg.Name+": panic serving request", "request_id", info.id, "path", r.URL.Path,
				"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			if !sw.wrote {
				WriteProblem(sw, r, problem.New(http.StatusInternalServerError, problem.CodeInternal, "internal error"))
			}
		}
		level := slog.LevelInfo
		if sw.status >= 500 {
			level = slog.LevelError
		}
		s.log.LogAttrs(ctx, level, s.cfg.Name+" request",
			slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Int("status", sw.status),
			slog.Duration("duration", s.cfg.Now().Sub(start)), slog.String("request_id", info.id),
			slog.String("caller", info.caller), slog.String("trace_id", info.trace),
			slog.Bool("replayed", info.replayed))
		s.tel.end(ctx, sv, r, sw.status)
	}()
	s.mux.ServeHTTP(sw, r)
}

// echoTraceparent returns the traceparent of the response to a request
// whose valid header raw carries trace: the same trace id and flags, and
// a new span id.
func echoTraceparent(trace, raw string) string {
	parts := strings.Split(strings.TrimSpace(raw), "-")
	tp := traceparent.Format(trace) // "00-<trace>-<new span>-01"
	return tp[:len(tp)-2] + parts[3]
}

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
		addr := clientAddr(r, s.cfg.TrustedProxies)
		caller := "ip:" + s.clientIP(r, addr)
		limitKey := caller
		switch {
		case s.cfg.TrialCaller != nil:
			caller = s.cfg.TrialCaller(r)
			limitKey = caller
		case name != "":
			caller = "key:" + name
			limitKey = caller
		case addr.IsValid():
			limitKey = limitCaller(addr, prefix)
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
		info.caller, info.principal = caller, name
		next.ServeHTTP(w, r)
	})
}

// anonymous names the caller by its address before calling next, and
// notes the principal when the request carries a credential the
// Authenticator accepts.
func (s *Server) anonymous(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info := infoFrom(r.Context())
		info.caller, info.principal = "ip:"+s.clientIP(r, clientAddr(r, s.cfg.TrustedProxies)), s.identify(r)
		next.ServeHTTP(w, r)
	})
}

// paid names the caller of a paid request by its payer before calling
// next, and notes the principal as anonymous does.
func (s *Server) paid(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		info := infoFrom(r.Context())
		info.caller, info.principal = s.paidCaller(r), s.identify(r)
		next.ServeHTTP(w, r)
	})
}

// paidCaller is the caller of a paid request: the payer the x402
// middleware put in its context, or its client address.
func (s *Server) paidCaller(r *http.Request) string {
	if vp, ok := x402.PaymentFromContext(r.Context()); ok && vp.Payer != "" {
		return "payer:" + strings.ToLower(vp.Payer)
	}
	return "ip:" + s.clientIP(r, clientAddr(r, s.cfg.TrustedProxies))
}

// clientIP returns the client address addr as text, or the host part of
// RemoteAddr when it holds no IP address.
func (s *Server) clientIP(r *http.Request, addr netip.Addr) string {
	if addr.IsValid() {
		return addr.String()
	}
	return ClientIP(r)
}

// identify returns the name the Authenticator gives the request's
// credential, or "" when there is none or it is refused.
func (s *Server) identify(r *http.Request) string {
	if s.cfg.Authenticator == nil || r.Header.Get("Authorization") == "" {
		return ""
	}
	name, err := s.cfg.Authenticator(r)
	if err != nil {
		return ""
	}
	return name
}

// serve reads, decodes and validates the request, then runs it, once per
// idempotency key.
func (s *Server) serve(w http.ResponseWriter, r *http.Request, prepare func(*http.Request, []byte) (Run, error), hasBody bool) {
	var body []byte
	if hasBody {
		if !IsJSON(r.Header.Get("Content-Type")) {
			w.Header().Set("Accept-Post", "application/json")
			WriteProblem(w, r, problem.Newf(http.StatusUnsupportedMediaType, problem.CodeUnsupportedMediaType,
				"Content-Type must be application/json, got %q", r.Header.Get("Content-Type")))
			return
		}
		var p *problem.Details
		if body, p = s.readBody(r); p != nil {
			WriteProblem(w, r, p)
			return
		}
	}
	run, err := prepare(r, body)
	if err != nil {
		WriteProblem(w, r, s.toProblem(r, err))
		return
	}
	key := r.Header.Get(HeaderIdempotencyKey)
	if key == "" || !hasBody {
		writeStored(w, s.execute(r, run))
		return
	}
	if !validIdempotencyKey(key) {
		WriteProblem(w, r, problem.New(http.StatusBadRequest, problem.CodeInvalidRequest,
			"Idempotency-Key must be 1 to 255 visible ASCII characters"))
		return
	}
	s.serveIdempotent(w, r, key, body, run)
}

// serveIdempotent runs the call under the idempotency key, or replays the
// response stored under it.
func (s *Server) serveIdempotent(w http.ResponseWriter, r *http.Request, key string, body []byte, run Run) {
	ctx := r.Context()
	info := infoFrom(ctx)
	scoped := scopedKey(info.caller, key)
	fp := fingerprint(r.Method, r.URL.Path, body)
	for {
		now := s.cfg.Now()
		e, err := s.cfg.Idempotency.Reserve(ctx, scoped, fp, now, now.Add(s.cfg.IdempotencyWindow))
		if err != nil {
			WriteProblem(w, r, s.toProblem(r, fmt.Errorf("%s: reserving idempotency key: %w", s.cfg.Name, err)))
			return
		}
		if e.State != IdempotencyReserved && e.Fingerprint != fp {
			s.tel.idempotency(ctx, "conflict")
			WriteProblem(w, r, problem.New(http.StatusUnprocessableEntity, problem.CodeUnprocessable,
				"Idempotency-Key was already used with another request; use a new key for a new request"))
			return
		}
		switch e.State {
		case IdempotencyCompleted:
			s.tel.idempotency(ctx, "replayed")
			info.replayed = true
			w.Header().Set(HeaderIdempotentReplayed, "true")
			writeStored(w, e.Response)
			return
		case IdempotencyInFlight:
			if !waitFor(ctx, e.Done) {
				WriteProblem(w, r, s.toProblem(r, ctx.Err()))
				return
			}
			continue
		}
		s.tel.idempotency(ctx, "executed")
		s.runReserved(w, r, scoped, e.Lease, run)
		return
	}
}

// scopedKey is the idempotency key of caller's key.
func scopedKey(caller, key string) string {
	return strconv.Itoa(len(caller)) + ":" + caller + ":" + key
}

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
	info := infoFrom(ctx)
	info.caller, info.principal = s.paidCaller(r), s.identify(r)
	key := r.Header.Get(HeaderIdempotencyKey)
	if !validIdempotencyKey(key) {
		return false
	}
	body, p := s.readBody(r)
	if p != nil {
		return false
	}
	scoped, fp := scopedKey(info.caller, key), fingerprint(r.Method, r.URL.Path, body)
	for {
		now := s.cfg.Now()
		e, err := s.cfg.Idempotency.Reserve(ctx, scoped, fp, now, now.Add(s.cfg.IdempotencyWindow))
		if err != nil {
			s.log.ErrorContext(ctx, s.cfg.Name+": looking up a paid response", "request_id", info.id, "error", err)
			return false
		}
		switch e.State {
		case IdempotencyReserved: // nothing stored: let the key go again
			if err := s.cfg.Idempotency.Release(context.WithoutCancel(ctx), scoped, e.Lease); err != nil {
				s.log.ErrorContext(ctx, s.cfg.Name+": releasing idempotency key", "error", err)
			}
			return false
		case IdempotencyInFlight:
			if !waitFor(ctx, e.Done) {
				return false
			}
			continue
		}
		if e.Fingerprint != fp {
			return false
		}
		info.replayed = true
		w.Header().Set(HeaderIdempotentReplayed, "true")
		writeStored(w, e.Response)
		return true
	}
}

// runReserved runs the call under a key this request reserved, stores the
// response unless it is a 5xx, and releases the key otherwise (also when
// the call panics).
func (s *Server) runReserved(w http.ResponseWriter, r *http.Request, scoped, lease string, run Run) {
	bg := context.WithoutCancel(r.Context())
	settled := false
	defer func() {
		if !settled {
			if err := s.cfg.Idempotency.Release(bg, scoped, lease); err != nil {
				s.log.ErrorContext(bg, s.cfg.Name+": releasing idempotency key", "error", err)
			}
		}
	}()
	resp := s.execute(r, run)
	if resp.Status < 500 {
		if err := s.cfg.Idempotency.Complete(bg, scoped, lease, resp, s.cfg.Now()); err != nil {
			s.log.ErrorContext(bg, s.cfg.Name+": storing idempotent response", "error", err)
		} else {
			settled = true
		}
	}
	writeStored(w, resp)
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

// errNilResponse reports a Run that returned neither an answer nor an
// error.
var errNilResponse = errors.New("the call returned a nil response and a nil error")

// execute runs the call and encodes its answer.
func (s *Server) execute(r *http.Request, run Run) *StoredResponse {
	resp, err := run(r.Context())
	if err == nil && resp == nil {
		err = errNilResponse
	}
	if err != nil {
		return problemResponse(r, s.toProblem(r, err))
	}
	body, err := json.Marshal(resp)
	if err != nil {
		return problemResponse(r, s.toProblem(r, fmt.Errorf("%s: encoding response: %w", s.cfg.Name, err)))
	}
	return &StoredResponse{Status: http.StatusOK, ContentType: "application/json", Body: append(body, '\n')}
}

// toProblem maps an error to the problem the client sees: a
// *problem.Details as it is, a deadline as 504, a cancelled request as
// 503, anything else as a bare 500.
func (s *Server) toProblem(r *http.Request, err error) *problem.Details {
	var p *problem.Details
	switch {
	case errors.As(err, &p):
		if p.Status < 400 || p.Status > 599 {
			s.log.ErrorContext(r.Context(), s.cfg.Name+": error with an invalid status", "error", err)
			return problem.New(http.StatusInternalServerError, problem.CodeInternal, "internal error")
		}
		return p
	case errors.Is(err, context.DeadlineExceeded):
		return problem.New(http.StatusGatewayTimeout, problem.CodeTimeout, "the call did not finish in time")
	case r.Context().Err() != nil:
		return problem.New(http.StatusServiceUnavailable, problem.CodeUnavailable, "the request was cancelled")
	default:
		s.log.ErrorContext(r.Context(), s.cfg.Name+": call failed", "request_id", infoFrom(r.Context()).id, "error", err)
		return problem.New(http.StatusInternalServerError, problem.CodeInternal, "internal error")
	}
}

// readBody reads the body up to the limit; the problem is a 413 or a 400.
func (s *Server) readBody(r *http.Request) ([]byte, *problem.Details) {
	limit := s.cfg.MaxBodyBytes
	if r.ContentLength > limit {
		return nil, problem.Newf(http.StatusRequestEntityTooLarge, problem.CodeBodyTooLarge, "body is larger than %d bytes", limit)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	if err != nil {
		return nil, problem.Newf(http.StatusBadRequest, problem.CodeMalformedJSON, "reading body: %v", err)
	}
	if int64(len(body)) > limit {
		return nil, problem.Newf(http.StatusRequestEntityTooLarge, problem.CodeBodyTooLarge, "body is larger than %d bytes", limit)
	}
	return body, nil
}

// methodNotAllowed answers 405 with the Allow header.
func methodNotAllowed(methods []string) http.Handler {
	allow := strings.Join(methods, ", ")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allow)
		WriteProblem(w, r, problem.Newf(http.StatusMethodNotAllowed, problem.CodeMethodNotAllowed,
			"%s %s is not served; use %s", r.Method, r.URL.Path, allow))
	})
}

// IsJSON reports whether a Content-Type names JSON: application/json or an
// application/...+json type.
func IsJSON(contentType string) bool {
	mt, _, err := mime.ParseMediaType(contentType)
	return err == nil && (mt == "application/json" || strings.HasPrefix(mt, "application/") && strings.HasSuffix(mt, "+json"))
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

// problemResponse encodes p for r, with the request id and path filled in.
func problemResponse(r *http.Request, p *problem.Details) *StoredResponse {
	q := *p
	q.RequestID = infoFrom(r.Context()).id
	if q.Instance == "" {
		q.Instance = r.URL.Path
	}
	if q.Title == "" {
		q.Title = http.StatusText(q.Status)
	}
	body, err := json.Marshal(&q)
	if err != nil { // only Extra can fail to encode; drop it rather than send nothing
		q.Extra = nil
		body, _ = json.Marshal(&q)
	}
	return &StoredResponse{Status: q.Status, ContentType: problem.ContentType, Body: append(body, '\n')}
}

// WriteProblem answers r with p, filling in the request id the Server gave
// r and, when p has none, the request path as instance and the status
// text as title.
func WriteProblem(w http.ResponseWriter, r *http.Request, p *problem.Details) {
	writeStored(w, problemResponse(r, p))
}

func writeStored(w http.ResponseWriter, s *StoredResponse) {
	h := w.Header()
	h.Set("Content-Type", s.ContentType)
	h.Set("X-Content-Type-Options", "nosniff")
	h.Set("Content-Length", strconv.Itoa(len(s.Body)))
	w.WriteHeader(s.Status)
	w.Write(s.Body)
}

// requestInfo is what the Server learns about a request as it goes.
type requestInfo struct {
	id, trace, caller, principal string
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

// Caller returns, from the context of a request the Server admitted, the
// identity that scopes its idempotency keys and names it in logs:
// "key:<name>" on a Key endpoint, "payer:<address>" on a Paid one,
// "ip:<address>" on a Public one, and on a Trial one what
// Config.TrialCaller returns ("key:<name>" or "ip:<address>" by default).
// It is "" outside a request.
func Caller(ctx context.Context) string {
	if info, ok := ctx.Value(requestInfoKey{}).(*requestInfo); ok {
		return info.caller
	}
	return ""
}

// statusWriter records the status a handler wrote.
type statusWriter struct {
	http.ResponseWriter
	status int
	wrote  bool
}

func (w *statusWriter) WriteHeader(code int) {
	if !w.wrote {
		w.status, w.wrote = code, true
	}
	w.ResponseWriter.WriteHeader(code)
}

func (w *statusWriter) Write(b []byte) (int, error) {
	if !w.wrote {
		w.status, w.wrote = http.StatusOK, true
	}
	return w.ResponseWriter.Write(b)
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (w *statusWriter) Unwrap() http.ResponseWriter { return w.ResponseWriter }

// newRequestID returns a fresh request id.
func newRequestID() string { return "req_" + randomHex(12) }

// randomHex returns n random bytes in hex. crypto/rand never fails.
func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b)
	return hex.EncodeToString(b)
}
