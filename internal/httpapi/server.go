package httpapi

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"runtime/debug"
	"strings"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/vouchkit/vouch/internal/traceparent"
	"github.com/vouchkit/vouch/problem"
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
const CodeX402NotConfigured = problem.CodeX402NotConfigured

// DefaultMaxBodyBytes is the request body limit unless told otherwise.
const DefaultMaxBodyBytes = 1 << 20

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
	// Admitted, when not nil, is called once for each request the access
	// check admits, before anything else of it is read or checked (its
	// query, Content-Type, body, Idempotency-Key), so that a count of
	// admitted requests counts them whatever their outcome.
	Admitted func()
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
	// TrialCaller tells trial callers apart. Nil, or "" for a request,
	// means the caller the Authenticator names ("key:<name>") when the
	// request carries a credential it accepts, and otherwise "ip:" and
	// the client address; the rate limit then groups IPv6 addresses by
	// TrialLimit.IPv6Prefix. A name spelt as the server names callers
	// itself ("key:", "ip:", "payer:" or "trial:" and more, or
	// LocalCaller), or one that holds a space (which joins a caller and
	// its credential's name in the scope of its kept answers), would
	// share that caller's allowance and kept answers, and one that is not
	// valid UTF-8 without NUL (a header value may hold any byte) cannot be
	// kept in a receipt or a shared store: such a request is served as its
	// default caller instead, and the name logged (Warn), unless it is the
	// request's own default name.
	TrialCaller func(*http.Request) string
	// TrustedProxies lists the reverse proxies whose client address
	// headers are believed. Nil (the default) believes none: the client
	// address is the peer's, which behind a proxy makes every client one
	// caller. When the peer is in one of the prefixes, the client address
	// is read from Forwarded (RFC 7239), or X-Forwarded-For when there is
	// none, from the right, skipping the hops that are trusted proxies
	// too. List only proxies that overwrite or append to these headers:
	// a client that reaches the server directly from a trusted address
	// could name any address. An IPv4-mapped prefix (::ffff:10.0.0.0/104)
	// stands for the IPv4 prefix it maps.
	TrustedProxies []netip.Prefix
	// TrustUnixProxy believes, as TrustedProxies does for the peers it
	// lists, the client address headers of a peer that holds no IP
	// address: a reverse proxy that reaches the server on a Unix domain
	// socket (RemoteAddr "@"), which no prefix can list. False (the
	// default) believes none: every client behind such a proxy is one
	// caller. Set it only when the proxy alone can connect to the socket:
	// any process that can could name any address.
	TrustUnixProxy bool
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
	// Payer returns the payer of a request X402 admitted, as the paywall
	// verified it, or "" when it names none. Nil names none. A paid
	// request whose payer is not named is its credential's caller
	// ("key:<name>"), or, without a credential, a caller of its own that
	// keeps no answer for replay and is not Accountable (see [Paid]).
	// (The router and trust handlers read x402.PaymentFromContext.)
	Payer func(*http.Request) string
	// AfterSettle arranges for f to learn whether the payment of the paid
	// request whose context is ctx settled, and reports false, never
	// calling f, when ctx carries no payment still to be settled (the
	// router and trust handlers pass x402.AfterSettle). The response of
	// a paid request is kept for replay only once f learns it settled.
	// Nil means no payment is settled after the call: the response is
	// kept at once.
	AfterSettle func(ctx context.Context, f func(settled bool)) bool
	// Idempotency keeps responses for replay; nil means a new
	// MemoryIdempotencyStore.
	Idempotency IdempotencyStore
	// IdempotencyWindow is how long a response is kept; zero means
	// DefaultIdempotencyWindow.
	IdempotencyWindow time.Duration
	// MaxBodyBytes is the largest request body accepted; zero means
	// DefaultMaxBodyBytes.
	MaxBodyBytes int64
	// Logger receives one line per request; nil is silent. The line's
	// trace_id is the trace id the answer carries: the one the endpoint
	// recorded ([AnswerTrace]), else the request's traceparent's, else
	// that of the recorded server span. An attribute without a value
	// (trace_id when there is none, caller for a request not admitted)
	// is left out, never written as "".
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
//     trace id and the parent it names in the request's context
//     (traceparent.WithParent);
//   - answers 404 for a path it does not serve, also for a path that is
//     not clean (a doubled slash, a "." or ".." segment), naming the clean
//     path, where http.ServeMux would redirect; 405 with Allow for another
//     method, and, for an endpoint with Prepare and a body, 415 unless the
//     body is JSON (application/json or a +json type) without a content
//     coding (Content-Encoding absent or identity), 413 for a body over
//     the limit, and the problem Prepare returns (400 naming the JSON
//     field path for invalid input);
//   - admits the request by the endpoint's [Access];
//   - with an Idempotency-Key header (1 to 255 visible ASCII characters)
//     on an endpoint with Prepare and a body, answers a repeat from the
//     same caller within the window with the first response (same status
//     and body, header Idempotent-Replayed: true) without running it
//     again. A key sent empty, more than once, or not of that form is
//     answered 400 invalid_request naming the header, and nothing runs. A repeat that arrives while the first still runs waits for
//     it; the same key with another method, path or body is answered 422.
//     Keys are scoped by caller (see [Caller]) and by principal (see
//     [Principal]) when there is one: one caller never gets another's kept
//     answer, nor one integration another's behind a shared address. Responses with a 5xx status are not kept,
//     so a retry after a server failure runs again, nor are those of a
//     request refused before anything of it ran (400, 401, 413, 415; a
//     Run that refuses its request answers 400), so that the corrected
//     request sent with the same key runs, and neither is the
//     response of a paid request whose payment did not settle
//     (Config.AfterSettle: a failed settlement, a gate's refusal); a request whose
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
	cfg     Config
	mux     *http.ServeMux
	limit   RateLimiter
	log     *slog.Logger
	tel     *serverTelemetry
	logLine string // the message of each request's log line
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
	case cfg.TrialLimit.check() != nil:
		return nil, cfg.TrialLimit.check()
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
		cfg.Idempotency = &MemoryIdempotencyStore{ipv6Bits: cfg.TrialLimit.IPv6Prefix}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	s := &Server{cfg: cfg, log: cfg.Logger, limit: cfg.RateLimiter, tel: newServerTelemetry(&cfg), logLine: cfg.Name + " request"}
	if s.log == nil {
		s.log = slog.New(slog.DiscardHandler)
	}
	if s.cfg.Authenticator != nil {
		s.cfg.Authenticator = checkedAuthenticator(s.cfg.Authenticator, s.log)
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

// ServeHTTP implements http.Handler.
func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	// Every request starts here: its id, traceparent, span, panic
	// recovery and log line are set up, then the mux hands it to its
	// endpoint's handler (see endpoint): the access gate (admission.go,
	// paid.go), then serve (serve.go), which runs the call once per
	// idempotency key (serveIdempotent, replay.go) and writes the answer
	// (write.go).
	start := s.cfg.Now()
	info := &requestInfo{id: newRequestID()}
	sw := &statusWriter{ResponseWriter: w}
	sw.Header().Set(HeaderRequestID, info.id)
	ctx := context.WithValue(r.Context(), requestInfoKey{}, info)
	if raw, ok := traceparent.Of(r.Header); ok {
		if p, ok := traceparent.Decode(raw); ok {
			p.State = strings.Join(r.Header.Values("tracestate"), ",")
			info.trace = p.TraceID
			sw.Header().Set(traceparent.Header, echoTraceparent(p))
			ctx = traceparent.WithParent(ctx, p)
		}
	}
	ctx, sv := s.tel.start(ctx, r)
	info.trace = traceparent.From(ctx) // a recorded server span's, when the request named none
	r = r.WithContext(ctx)

	defer func() {
		v := recover()
		aborted := v == http.ErrAbortHandler // the handler cut the response short
		if v != nil && !aborted {
			s.log.ErrorContext(ctx, s.cfg.Name+": panic serving request", "request_id", info.id, "path", r.URL.Path,
				"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			if !sw.wrote {
				WriteProblem(sw, r, problem.New(http.StatusInternalServerError, problem.CodeInternal, "internal error"))
			}
		}
		level := slog.LevelInfo
		if sw.status >= 500 || aborted {
			level = slog.LevelError
		}
		line := [...]slog.Attr{
			slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Int("status", sw.status),
			slog.Duration("duration", s.cfg.Now().Sub(start)), slog.String("request_id", info.id),
			slog.String("caller", info.caller), slog.String("trace_id", info.trace),
			slog.Bool("replayed", info.replayed), slog.Bool("aborted", true),
		}
		n := len(line) - 1 // aborted only when it was
		if aborted {
			n++
		}
		s.log.LogAttrs(ctx, level, s.logLine, present(line[:n])...)
		if aborted {
			s.tel.abort(ctx, sv, r, sw.status)
			panic(v)
		}
		s.tel.end(ctx, sv, r, sw.status)
	}()
	if p := uncleanPath(r); p != nil {
		WriteProblem(sw, r, p)
		return
	}
	s.mux.ServeHTTP(sw, r)
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
	if admitted := e.Admitted; admitted != nil {
		served := next
		next = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			admitted()
			served.ServeHTTP(w, r)
		})
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
			return s.principalFirst(s.cfg.X402(&paidReplayer{Handler: s.paid(next), s: s})), nil
		}
		return s.principalFirst(s.cfg.X402(s.paid(next))), nil
	case Public:
		return s.anonymous(next), nil
	}
	return nil, fmt.Errorf("endpoint %s %s: unknown access %d", e.Method, e.Path, e.Access)
}

// echoTraceparent returns the traceparent of the response to a request
// whose traceparent is p: the same trace id, a new span id, and the flags
// that trace context defines, sampled (0x01) and random trace id (0x02),
// as p gives them; the bits it reserves are zero, as it asks of a value
// written at version 00.
func echoTraceparent(p traceparent.Parent) string {
	return traceparent.Parent{TraceID: p.TraceID, ParentID: traceparent.NewParentID(), Flags: p.Flags}.String()
}

// present returns attrs without the attributes whose value is an empty
// string (a request with no caller, no trace id), as no span attribute or
// metric label is one: an attribute without a value is left out. It
// filters attrs in place.
func present(attrs []slog.Attr) []slog.Attr {
	out := attrs[:0]
	for _, a := range attrs {
		if a.Value.Kind() != slog.KindString || a.Value.String() != "" {
			out = append(out, a)
		}
	}
	return out
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
