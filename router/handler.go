package router

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/netip"
	"sync/atomic"
	"time"

	"github.com/vouchkit/vouch/internal/httpapi"
	"github.com/vouchkit/vouch/internal/jsonbody"
	"github.com/vouchkit/vouch/x402"
)

// CodeX402NotConfigured is the code of the 501 problem that an x402 route
// answers when the [Handler] has no x402 middleware.
const CodeX402NotConfigured Code = httpapi.CodeX402NotConfigured

// DefaultMaxBodyBytes is the request body limit of a [Handler] unless told
// otherwise.
const DefaultMaxBodyBytes = httpapi.DefaultMaxBodyBytes

// Handler serves a [Service] over HTTP: the routes of [Routes], each
// returning JSON, with errors as RFC 9457 problem bodies. The POST routes
// take JSON and call the Service (POST /api/v3/feedback calls its
// Feedback, when it is a [FeedbackReporter]: see [FeedbackRequest]); the GET routes are answered by the
// Handler: /api/v1/ping and /api/v1/x402/ping with {"message":"pong"},
// /api/v1/about with an [About], and /api/v1/status with a [Status].
//
// For every request it:
//
//   - sets X-Request-Id on the response (problem bodies repeat it as
//     request_id); when the request has a valid W3C traceparent, echoes one
//     with the same trace id and a new span id, and passes the trace id to
//     the Service (see [TraceIDFrom]);
//   - answers 404 for a path it does not serve, 405 with Allow for another
//     method, 415 unless the body is JSON (application/json or a +json
//     type) without a content coding (Content-Encoding absent or
//     identity), 413 for a body over the limit, 400 naming the JSON field path
//     for input that does not decode or validate;
//   - authorizes the call by variant: normal routes ask the
//     [Authenticator] (401 with WWW-Authenticate when it refuses), except
//     the public ping and about, which admit everyone; trial routes take
//     no credential and are rate limited per caller by the [RateLimiter],
//     by default a token bucket per caller (429 with Retry-After over the
//     limit); x402 routes go through the x402 middleware ([WithX402]),
//     and answer 501 with code x402_not_configured when there is none;
//   - with an Idempotency-Key header (1 to 255 visible ASCII characters),
//     answers a repeat from the same caller within the window with the
//     first response (same status and body, header Idempotent-Replayed:
//     true) without calling the Service again. A repeat that arrives while
//     the first still runs waits for it; the same key with another method,
//     path or body is answered 422. Keys are scoped by caller:
//     "key:<name>" for a caller the Authenticator names,
//     "payer:<address>" for an x402 caller, "ip:<address>" for an
//     anonymous trial caller (see [WithTrustedProxies]), or what the
//     trial caller function returns, and also by the name the
//     Authenticator gives a credential the request carries, so that
//     integrations behind one address never share an answer. Responses
//     with a 5xx status are not kept, so a retry after a server failure
//     runs again, nor is a 400 the Service answers (a session it does
//     not have, a replica count it can never serve), which refuses the
//     request before anything runs: the corrected request sent with the
//     same key runs;
//   - counts, by route, the requests it admitted (past the credential,
//     the trial limit or the payment), which GET /api/v1/status reports;
//   - maps the Service's error: an *[Error] to its own status, a context
//     deadline to 504, anything else to a 500 that reveals nothing of it
//     (the logger gets the error). A panicking Service is answered 500 and
//     logged, as net/http confines a handler's panic to its request.
//
// GET /api/v1/status reports the sessions of a Service that implements
// [StatusReporter] (the [Engine] and the [Client] do), and the counts.
//
// The trust service's handler (trust.NewHandler) runs the same pipeline
// and takes the same configuration types.
//
// A Handler is safe for concurrent use. Build it with [NewHandler].
type Handler struct {
	cfg httpapi.Config
	srv *httpapi.Server

	name, version string                   // of GET /api/v1/about; "" means the default
	prices        map[string]x402.Price    // read by NewHandler only
	calls         map[string]*atomic.Int64 // by "METHOD PATH"; the map is only read after NewHandler

	moreCalls []func() map[string]int64 // of other handlers (WithStatusCalls)
}

// HandlerOption configures a [Handler].
type HandlerOption func(*Handler)

// WithAuthenticator sets how normal-variant callers are identified. Without
// one, every normal-variant request is refused with 401: the Handler
// accepts no credential it was not told about. [KeyAuthenticator] builds
// one from a table of API keys.
func WithAuthenticator(a Authenticator) HandlerOption {
	return func(h *Handler) { h.cfg.Authenticator = a }
}

// WithTrialLimit sets the rate limit of the trial variants; the zero
// TrialLimit means the defaults. It configures the default token bucket,
// and cannot be combined with [WithRateLimiter].
func WithTrialLimit(l TrialLimit) HandlerOption {
	return func(h *Handler) { h.cfg.TrialLimit = l }
}

// WithRateLimiter replaces the in-memory token bucket of the trial variants
// with l, such as a limiter whose counts live in a database shared by
// several processes. Nil means the token bucket set by [WithTrialLimit].
func WithRateLimiter(l RateLimiter) HandlerOption {
	return func(h *Handler) { h.cfg.RateLimiter = l }
}

// WithTrialCaller sets how trial callers are told apart. The default is
// the caller the Authenticator names when the request carries a credential
// it accepts, and otherwise the client's IP address: the peer's
// ([ClientIP]), or the one a proxy listed by [WithTrustedProxies] names.
// A request for which f returns "" gets the default caller. So does a
// request f names as the Handler names callers itself ("key:<name>",
// "ip:<address>", "payer:<address>", "trial:<caller>", or
// [DefaultCaller]) other than its own default name, or by a name that
// holds a space or is not valid UTF-8 without NUL (which no receipt and
// no shared store holds), the name logged: f often passes on what the client
// sent (a session header), and a client naming itself "key:alice" would
// otherwise spend the trial allowance of alice's credential and be given
// its kept answers. A name f takes is its own caller's, whatever
// credential the request carries: its calls are owned by "trial:" and the
// name (see [CallerFrom]), never by a credential, and a name that is a
// credential's own name ("alice") shares nothing with that credential.
// Each name is a trial allowance of its own: a client that picks its
// name (a session header f passes on) has as many allowances as names it
// sends, so pass on names the host issued.
func WithTrialCaller(f func(*http.Request) string) HandlerOption {
	return func(h *Handler) { h.cfg.TrialCaller = f }
}

// WithTrustedProxies sets the reverse proxies whose client address
// headers (Forwarded, or X-Forwarded-For) are believed when they connect:
// the trial variants then tell callers apart, and scope their idempotency
// keys, by the address the proxies name. None are trusted by default. List
// only proxies that overwrite or append to these headers. A request that
// carries both, naming different clients, is taken to come from the proxy
// itself: a proxy that writes one header often passes the other through as
// the client sent it. An IPv4-mapped prefix (::ffff:10.0.0.0/104) stands
// for the IPv4 prefix it maps. A proxy on a Unix domain socket has no
// address to list: see [WithTrustedUnixProxy].
func WithTrustedProxies(prefixes ...netip.Prefix) HandlerOption {
	return func(h *Handler) { h.cfg.TrustedProxies = prefixes }
}

// WithTrustedUnixProxy believes, as [WithTrustedProxies] does for the
// proxies it lists, the client address headers of a peer that holds no
// IP address: a reverse proxy that reaches the Handler on a Unix domain
// socket, which no prefix can list (nginx's proxy_pass
// http://unix:/run/vouch.sock). Without it every client behind such a
// proxy is one caller, whose trial allowance and idempotency keys they
// all share. Use it only when the proxy alone can connect to the socket:
// any process that can could name any address.
func WithTrustedUnixProxy() HandlerOption {
	return func(h *Handler) { h.cfg.TrustUnixProxy = true }
}

// WithX402 sets the middleware that guards the x402 routes: it answers
// 402 with payment terms, verifies the proof and settles, and calls the
// handler it wraps for a paid request (x402.Middleware has this shape).
// Without it, the x402 routes answer 501 with code x402_not_configured.
func WithX402(mw func(http.Handler) http.Handler) HandlerOption {
	return func(h *Handler) { h.cfg.X402, h.cfg.Payer, h.cfg.AfterSettle = mw, payerOf, x402.AfterSettle }
}

// payerOf returns the payer the x402 middleware verified for r.
func payerOf(r *http.Request) string {
	if vp, ok := x402.PaymentFromContext(r.Context()); ok {
		return vp.Payer
	}
	return ""
}

// WithIdempotency sets the store of idempotent responses and how long a
// response is kept for replay. A nil store means a new
// [MemoryIdempotencyStore]; a zero window means DefaultIdempotencyWindow.
func WithIdempotency(store IdempotencyStore, window time.Duration) HandlerOption {
	return func(h *Handler) { h.cfg.Idempotency, h.cfg.IdempotencyWindow = store, window }
}

// WithMaxBodyBytes sets the largest request body accepted; zero means
// DefaultMaxBodyBytes.
func WithMaxBodyBytes(n int64) HandlerOption {
	return func(h *Handler) { h.cfg.MaxBodyBytes = n }
}

// WithHandlerLogger sets the logger that receives one line per request
// (Info; Error for a 5xx) with the route, status, duration, request id,
// caller and trace id; the caller and the trace id are left out when the
// request has none. Nil means silent.
func WithHandlerLogger(l *slog.Logger) HandlerOption {
	return func(h *Handler) { h.cfg.Logger = l }
}

// WithHandlerClock sets the clock of rate limits and idempotency windows;
// nil means time.Now. Tests use it to move time without sleeping.
func WithHandlerClock(now func() time.Time) HandlerOption {
	return func(h *Handler) { h.cfg.Now = now }
}

// WithServiceInfo sets the service name and version that GET
// /api/v1/about reports. Empty strings keep the defaults: "vouch router",
// and the vouch release.
func WithServiceInfo(name, version string) HandlerOption {
	return func(h *Handler) { h.name, h.version = name, version }
}

// WithX402Prices tells the Handler what its x402 routes cost, so that GET
// /api/v1/about can list the prices. routes is the map the host gives
// x402.MiddlewareConfig.Routes: each x402 route of the Handler is priced
// by the pattern that map's http.ServeMux would pick for it, and routes
// the map does not price are left out. The middleware itself, which
// charges the prices, is set by [WithX402], without which NewHandler
// rejects this option. The map is read during NewHandler only.
//
// The host prices every x402 route it wants paid, including "GET
// /api/v1/x402/ping", the cheapest; an x402 route the middleware does not
// price passes it free.
func WithX402Prices(routes map[string]x402.Price) HandlerOption {
	return func(h *Handler) { h.prices = routes }
}

// WithStatusCalls adds the counts calls reports to the calls member of GET
// /api/v1/status, beside the Handler's own: the counts of another handler
// served beside this one, such as the trust service's
// (trust.Handler.Calls) for its /api/v4 routes. calls is called on each
// status request and must be safe for concurrent use.
func WithStatusCalls(calls func() map[string]int64) HandlerOption {
	return func(h *Handler) {
		if calls != nil {
			h.moreCalls = append(h.moreCalls, calls)
		}
	}
}

// NewHandler returns a Handler serving svc. It fails when svc is nil, an
// option is out of range (a negative body limit or window, a negative
// trial rate or burst), both a trial limit and a rate limiter are set,
// prices are given without the x402 middleware, or a price pattern is
// not a valid http.ServeMux pattern.
func NewHandler(svc Service, opts ...HandlerOption) (*Handler, error) {
	if svc == nil {
		return nil, errors.New("router: NewHandler: the Service is nil")
	}
	h := &Handler{}
	for _, o := range opts {
		o(h)
	}
	about, err := h.about()
	if err != nil {
		return nil, fmt.Errorf("router: NewHandler: %w", err)
	}
	routes := Routes()
	h.calls = make(map[string]*atomic.Int64, len(routes))
	h.cfg.Name = "router"
	h.cfg.Endpoints = nil
	for _, rt := range routes {
		name := rt.Method + " " + rt.Path
		count := new(atomic.Int64)
		h.calls[name] = count
		run := h.runner(svc, rt.Op, about)
		h.cfg.Endpoints = append(h.cfg.Endpoints, httpapi.Endpoint{
			Method:   rt.Method,
			Path:     rt.Path,
			Access:   access(rt),
			Admitted: func() { count.Add(1) },
			Prepare: func(_ *http.Request, body []byte) (httpapi.Run, error) {
				return run(body)
			},
		})
	}
	srv, err := httpapi.NewServer(h.cfg)
	if err != nil {
		return nil, fmt.Errorf("router: NewHandler: %w", err)
	}
	h.srv = srv
	return h, nil
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.srv.ServeHTTP(w, r)
}

// access returns how rt admits requests.
func access(rt Route) httpapi.Access {
	switch {
	case rt.Variant == VariantTrial:
		return httpapi.Trial
	case rt.Variant == VariantX402:
		return httpapi.Paid
	case rt.Public:
		return httpapi.Public
	}
	return httpapi.Key
}

// decoder decodes and validates a request body for svc.
type decoder func(svc Service, body []byte) (httpapi.Run, error)

// errNilResponse reports a Service that returned neither a response nor an
// error.
var errNilResponse = errors.New("router: the Service returned a nil response and a nil error")

// decodeWith returns the decoder of a Service method.
func decodeWith[Req any, P interface {
	*Req
	Validate() error
}, Resp any](method func(Service, context.Context, P) (*Resp, error)) decoder {
	schema := jsonbody.SchemaOf(P(new(Req)))
	return func(svc Service, body []byte) (httpapi.Run, error) {
		req := P(new(Req))
		if err := jsonbody.Unmarshal(body, req); err != nil {
			return nil, jsonbody.Refuse(err, schema.Unknown(body))
		}
		unknown, zeros := schema.Inspect(body)
		if err := jsonbody.Refuse(jsonbody.Refuse(req.Validate(), validate.Zeros(zeros)), unknown); err != nil {
			return nil, err
		}
		return func(ctx context.Context) (any, error) {
			resp, err := method(svc, ctx, req)
			if err != nil {
				return nil, err
			}
			if resp == nil {
				return nil, errNilResponse
			}
			return resp, nil
		}, nil
	}
}

// decoderFor returns the decoder of op, or nil when op is not a Service
// method.
func decoderFor(op Operation) decoder {
	switch op {
	case OpDelegateV1:
		return decodeWith(Service.DelegateV1)
	case OpValidateV1:
		return decodeWith(Service.ValidateV1)
	case OpDelegateV2:
		return decodeWith(Service.DelegateV2)
	case OpValidateV2:
		return decodeWith(Service.ValidateV2)
	case OpDelegateV3:
		return refusingKnownMistakes(decodeWith(Service.DelegateV3))
	case OpValidateV3:
		return refusingKnownMistakes(decodeWith(Service.ValidateV3))
	case OpFactcheck:
		return refusingKnownMistakes(decodeWith(Service.Factcheck))
	case OpFactcheckV1:
		return decodeWith(Service.FactcheckV1)
	}
	return nil
}
