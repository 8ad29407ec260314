package router

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"runtime/debug"
	"strconv"
	"strings"
	"time"

	"github.com/vouchkit/vouch/internal/jsonbody"
	"github.com/vouchkit/vouch/internal/problem"
)

// CodeX402NotConfigured is the code of the 501 problem that an x402 route
// answers when the [Handler] has no x402 middleware.
const CodeX402NotConfigured Code = "x402_not_configured"

// DefaultMaxBodyBytes is the request body limit of a [Handler] unless told
// otherwise.
const DefaultMaxBodyBytes = 1 << 20

// Handler serves a [Service] over HTTP: the POST routes of [Routes], each
// taking and returning JSON, with errors as RFC 9457 problem bodies.
//
// For every request it:
//
//   - sets X-Request-Id on the response (problem bodies repeat it as
//     request_id); when the request has a valid W3C traceparent, echoes one
//     with the same trace id and a new span id, and passes the trace id to
//     the Service (see [TraceIDFrom]);
//   - answers 404 for a path it does not serve, 405 with Allow for another
//     method, 415 unless the body is JSON (application/json or a +json
//     type), 413 for a body over the limit, 400 naming the JSON field path
//     for input that does not decode or validate;
//   - authorizes the call by variant: normal routes ask the
//     [Authenticator] (401 with WWW-Authenticate when it refuses); trial
//     routes take no credential and are rate limited per caller with a
//     token bucket (429 with Retry-After over the limit); x402 routes go
//     through the x402 middleware, and answer 501 with code
//     x402_not_configured when there is none;
//   - with an Idempotency-Key header (1 to 255 visible ASCII characters),
//     answers a repeat from the same caller within the window with the
//     first response (same status and body, header Idempotent-Replayed:
//     true) without calling the Service again. A repeat that arrives while
//     the first still runs waits for it; the same key with another method,
//     path or body is answered 422. Keys are scoped by caller:
//     "key:<name>" for a caller the Authenticator names, "ip:<address>"
//     for an anonymous trial or x402 caller, or what the trial caller
//     function returns. Responses with a 5xx status are not
//     kept, so a retry after a server failure runs again;
//   - maps the Service's error: an *[Error] to its own status, a context
//     deadline to 504, anything else to a 500 that reveals nothing of it
//     (the logger gets the error). A panicking Service is answered 500 and
//     logged, as net/http confines a handler's panic to its request.
//
// A Handler is safe for concurrent use. Build it with [NewHandler].
type Handler struct {
	svc         Service
	mux         *http.ServeMux
	auth        Authenticator
	trialCaller func(*http.Request) string
	trialLimit  TrialLimit
	trial       *limiters
	x402        func(http.Handler) http.Handler
	idem        IdempotencyStore
	window      time.Duration
	maxBody     int64
	log         *slog.Logger
	now         func() time.Time
}

// HandlerOption configures a [Handler].
type HandlerOption func(*Handler)

// WithAuthenticator sets how normal-variant callers are identified. Without
// one, every normal-variant request is refused with 401: the Handler
// accepts no credential it was not told about. [KeyAuthenticator] builds
// one from a table of API keys.
func WithAuthenticator(a Authenticator) HandlerOption {
	return func(h *Handler) { h.auth = a }
}

// WithTrialLimit sets the rate limit of the trial variants; the zero
// TrialLimit means the defaults.
func WithTrialLimit(l TrialLimit) HandlerOption {
	return func(h *Handler) { h.trialLimit = l }
}

// WithTrialCaller sets how trial callers are told apart. The default is
// the caller the Authenticator names when the request carries a credential
// it accepts, and otherwise the peer's IP address ([ClientIP]). A host
// behind a reverse proxy it trusts passes a function reading the proxy's
// header instead.
func WithTrialCaller(f func(*http.Request) string) HandlerOption {
	return func(h *Handler) { h.trialCaller = f }
}

// WithX402 sets the middleware that guards the x402 routes: it answers
// 402 with payment terms, verifies the proof and settles, and calls the
// handler it wraps for a paid request (x402.Middleware has this shape).
// Without it, the x402 routes answer 501 with code x402_not_configured.
func WithX402(mw func(http.Handler) http.Handler) HandlerOption {
	return func(h *Handler) { h.x402 = mw }
}

// WithIdempotency sets the store of idempotent responses and how long a
// response is kept for replay. A nil store means a new
// [MemoryIdempotencyStore]; a zero window means DefaultIdempotencyWindow.
func WithIdempotency(store IdempotencyStore, window time.Duration) HandlerOption {
	return func(h *Handler) { h.idem, h.window = store, window }
}

// WithMaxBodyBytes sets the largest request body accepted; zero means
// DefaultMaxBodyBytes.
func WithMaxBodyBytes(n int64) HandlerOption {
	return func(h *Handler) { h.maxBody = n }
}

// WithHandlerLogger sets the logger that receives one line per request
// (Info; Error for a 5xx) with the route, status, duration, request id,
// caller and trace id. Nil means silent.
func WithHandlerLogger(l *slog.Logger) HandlerOption {
	return func(h *Handler) { h.log = l }
}

// WithHandlerClock sets the clock of rate limits and idempotency windows;
// nil means time.Now. Tests use it to move time without sleeping.
func WithHandlerClock(now func() time.Time) HandlerOption {
	return func(h *Handler) { h.now = now }
}

// NewHandler returns a Handler serving svc. It fails when svc is nil or an
// option is out of range (a negative body limit or window, a negative
// trial rate or burst).
func NewHandler(svc Service, opts ...HandlerOption) (*Handler, error) {
	if svc == nil {
		return nil, errors.New("router: NewHandler: the Service is nil")
	}
	h := &Handler{svc: svc}
	for _, o := range opts {
		o(h)
	}
	switch {
	case h.maxBody < 0:
		return nil, fmt.Errorf("router: NewHandler: body limit %d is negative", h.maxBody)
	case h.window < 0:
		return nil, fmt.Errorf("router: NewHandler: idempotency window %s is negative", h.window)
	case h.trialLimit.Rate < 0 || h.trialLimit.Burst < 0 || h.trialLimit.MaxCallers < 0:
		return nil, fmt.Errorf("router: NewHandler: trial limit %+v has a negative member", h.trialLimit)
	}
	if h.maxBody == 0 {
		h.maxBody = DefaultMaxBodyBytes
	}
	if h.window == 0 {
		h.window = DefaultIdempotencyWindow
	}
	if h.idem == nil {
		h.idem = &MemoryIdempotencyStore{}
	}
	if h.now == nil {
		h.now = time.Now
	}
	if h.log == nil {
		h.log = slog.New(slog.DiscardHandler)
	}
	if h.trialCaller == nil {
		h.trialCaller = h.defaultTrialCaller
	}
	h.trial = newLimiters(h.trialLimit.withDefaults())

	h.mux = http.NewServeMux()
	allowed := make(map[string][]string)
	for _, rt := range Routes() {
		h.mux.Handle(rt.Method+" "+rt.Path, h.route(rt))
		allowed[rt.Path] = append(allowed[rt.Path], rt.Method)
	}
	for path, methods := range allowed {
		h.mux.Handle(path, methodNotAllowed(methods))
	}
	h.mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		writeProblem(w, r, problem.Newf(http.StatusNotFound, problem.CodeNotFound, "no route %s", r.URL.Path))
	})
	return h, nil
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	start := h.now()
	info := &requestInfo{id: newRequestID()}
	sw := &statusWriter{ResponseWriter: w}
	sw.Header().Set(HeaderRequestID, info.id)
	ctx := context.WithValue(r.Context(), requestInfoKey{}, info)
	if trace, flags, ok := parseTraceparent(r.Header.Get(HeaderTraceparent)); ok {
		info.trace = trace
		sw.Header().Set(HeaderTraceparent, newTraceparent(trace, flags))
		ctx = WithTraceID(ctx, trace)
	}
	r = r.WithContext(ctx)

	defer func() {
		if v := recover(); v != nil {
			if v == http.ErrAbortHandler {
				panic(v)
			}
			h.log.ErrorContext(ctx, "router: panic serving request", "request_id", info.id, "path", r.URL.Path,
				"panic", fmt.Sprint(v), "stack", string(debug.Stack()))
			if !sw.wrote {
				writeProblem(sw, r, problem.New(http.StatusInternalServerError, problem.CodeInternal, "internal error"))
			}
		}
		level := slog.LevelInfo
		if sw.status >= 500 {
			level = slog.LevelError
		}
		h.log.LogAttrs(ctx, level, "router request",
			slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.Int("status", sw.status),
			slog.Duration("duration", h.now().Sub(start)), slog.String("request_id", info.id),
			slog.String("caller", info.caller), slog.String("trace_id", info.trace),
			slog.Bool("replayed", info.replayed))
	}()
	h.mux.ServeHTTP(sw, r)
}

// route returns the handler of one route: the variant's gate around the
// operation.
func (h *Handler) route(rt Route) http.Handler {
	decode := decoderFor(rt.Op)
	op := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { h.serveOp(w, r, decode) })
	switch rt.Variant {
	case VariantTrial:
		return h.limited(op)
	case VariantX402:
		if h.x402 == nil {
			return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				writeProblem(w, r, problem.New(http.StatusNotImplemented, CodeX402NotConfigured,
					"x402 not configured: this server takes no pay-per-call requests; use the normal or trial route"))
			})
		}
		return h.x402(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			infoFrom(r.Context()).caller = "ip:" + ClientIP(r)
			op.ServeHTTP(w, r)
		}))
	default:
		return h.authenticated(op)
	}
}

// authenticated asks the Authenticator before calling next.
func (h *Handler) authenticated(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		caller, err := "", ErrNoCredentials
		if h.auth != nil {
			caller, err = h.auth(r)
		}
		if err == nil && caller == "" {
			err = ErrBadCredentials
		}
		if err != nil {
			var p *Error
			if errors.As(err, &p) {
				writeProblem(w, r, p)
				return
			}
			challenge := `Bearer realm="vouch"`
			detail := "missing credentials: send Authorization: Bearer <key>"
			if !errors.Is(err, ErrNoCredentials) {
				challenge += `, error="invalid_token"`
				detail = "the credential is not valid"
			}
			w.Header().Set("WWW-Authenticate", challenge)
			writeProblem(w, r, problem.New(http.StatusUnauthorized, problem.CodeUnauthorized, detail))
			return
		}
		infoFrom(r.Context()).caller = "key:" + caller
		next.ServeHTTP(w, r)
	})
}

// limited takes a token of the caller's trial bucket before calling next.
func (h *Handler) limited(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		caller := h.trialCaller(r)
		ok, wait := h.trial.allow(caller, h.now())
		if !ok {
			secs := retryAfterSeconds(wait)
			w.Header().Set("Retry-After", strconv.Itoa(secs))
			writeProblem(w, r, problem.Newf(http.StatusTooManyRequests, problem.CodeRateLimited,
				"trial rate limit reached; retry in %d s, or use the normal route with an API key", secs))
			return
		}
		infoFrom(r.Context()).caller = caller
		next.ServeHTTP(w, r)
	})
}

func (h *Handler) defaultTrialCaller(r *http.Request) string {
	if h.auth != nil && r.Header.Get("Authorization") != "" {
		if caller, err := h.auth(r); err == nil && caller != "" {
			return "key:" + caller
		}
	}
	return "ip:" + ClientIP(r)
}

// serveOp reads, decodes and validates the body, then runs the call, once
// per idempotency key.
func (h *Handler) serveOp(w http.ResponseWriter, r *http.Request, decode decoder) {
	if !isJSON(r.Header.Get("Content-Type")) {
		w.Header().Set("Accept-Post", "application/json")
		writeProblem(w, r, problem.Newf(http.StatusUnsupportedMediaType, problem.CodeUnsupportedMediaType,
			"Content-Type must be application/json, got %q", r.Header.Get("Content-Type")))
		return
	}
	body, err := h.readBody(r)
	if err != nil {
		writeProblem(w, r, err.(*Error))
		return
	}
	run, err := decode(h.svc, body)
	if err != nil {
		writeProblem(w, r, h.toProblem(r, err))
		return
	}
	key := r.Header.Get(HeaderIdempotencyKey)
	if key == "" {
		writeStored(w, h.execute(r, run))
		return
	}
	if !validIdempotencyKey(key) {
		writeProblem(w, r, problem.New(http.StatusBadRequest, problem.CodeInvalidRequest,
			"Idempotency-Key must be 1 to 255 visible ASCII characters"))
		return
	}
	h.serveIdempotent(w, r, key, body, run)
}

// serveIdempotent runs the call under the idempotency key, or replays the
// response stored under it.
func (h *Handler) serveIdempotent(w http.ResponseWriter, r *http.Request, key string, body []byte, run call) {
	ctx := r.Context()
	info := infoFrom(ctx)
	scoped := strconv.Itoa(len(info.caller)) + ":" + info.caller + ":" + key
	fp := fingerprint(r.Method, r.URL.Path, body)
	for {
		now := h.now()
		e, err := h.idem.Reserve(ctx, scoped, fp, now, now.Add(h.window))
		if err != nil {
			writeProblem(w, r, h.toProblem(r, fmt.Errorf("router: reserving idempotency key: %w", err)))
			return
		}
		if e.State != IdempotencyReserved && e.Fingerprint != fp {
			writeProblem(w, r, problem.New(http.StatusUnprocessableEntity, problem.CodeUnprocessable,
				"Idempotency-Key was already used with another request; use a new key for a new request"))
			return
		}
		switch e.State {
		case IdempotencyCompleted:
			info.replayed = true
			w.Header().Set(HeaderIdempotentReplayed, "true")
			writeStored(w, e.Response)
			return
		case IdempotencyInFlight:
			if !waitFor(ctx, e.Done) {
				writeProblem(w, r, h.toProblem(r, ctx.Err()))
				return
			}
			continue
		}
		h.runReserved(w, r, scoped, run)
		return
	}
}

// runReserved runs the call under a key this request reserved, stores the
// response unless it is a 5xx, and releases the key otherwise (also when
// the Service panics).
func (h *Handler) runReserved(w http.ResponseWriter, r *http.Request, scoped string, run call) {
	bg := context.WithoutCancel(r.Context())
	settled := false
	defer func() {
		if !settled {
			if err := h.idem.Release(bg, scoped); err != nil {
				h.log.ErrorContext(bg, "router: releasing idempotency key", "error", err)
			}
		}
	}()
	resp := h.execute(r, run)
	if resp.Status < 500 {
		if err := h.idem.Complete(bg, scoped, resp, h.now()); err != nil {
			h.log.ErrorContext(bg, "router: storing idempotent response", "error", err)
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

// execute calls the Service and encodes its answer.
func (h *Handler) execute(r *http.Request, run call) *StoredResponse {
	resp, err := run(r.Context())
	if err != nil {
		return problemResponse(r, h.toProblem(r, err))
	}
	body, err := json.Marshal(resp)
	if err != nil {
		return problemResponse(r, h.toProblem(r, fmt.Errorf("router: encoding response: %w", err)))
	}
	return &StoredResponse{Status: http.StatusOK, ContentType: "application/json", Body: append(body, '\n')}
}

// toProblem maps an error to the problem the client sees: an *Error as
// it is, a deadline as 504, anything else as a bare 500.
func (h *Handler) toProblem(r *http.Request, err error) *Error {
	var p *Error
	switch {
	case errors.As(err, &p):
		if p.Status < 400 || p.Status > 599 {
			h.log.ErrorContext(r.Context(), "router: Service error with an invalid status", "error", err)
			return problem.New(http.StatusInternalServerError, problem.CodeInternal, "internal error")
		}
		return p
	case errors.Is(err, context.DeadlineExceeded):
		return problem.New(http.StatusGatewayTimeout, problem.CodeTimeout, "the call did not finish in time")
	case r.Context().Err() != nil:
		return problem.New(http.StatusServiceUnavailable, problem.CodeUnavailable, "the request was cancelled")
	default:
		h.log.ErrorContext(r.Context(), "router: Service error", "request_id", infoFrom(r.Context()).id, "error", err)
		return problem.New(http.StatusInternalServerError, problem.CodeInternal, "internal error")
	}
}

// readBody reads the body up to the limit; the error is an *Error (413 or
// 400).
func (h *Handler) readBody(r *http.Request) ([]byte, error) {
	if r.ContentLength > h.maxBody {
		return nil, problem.Newf(http.StatusRequestEntityTooLarge, problem.CodeBodyTooLarge, "body is larger than %d bytes", h.maxBody)
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, h.maxBody+1))
	if err != nil {
		return nil, problem.Newf(http.StatusBadRequest, problem.CodeMalformedJSON, "reading body: %v", err)
	}
	if int64(len(body)) > h.maxBody {
		return nil, problem.Newf(http.StatusRequestEntityTooLarge, problem.CodeBodyTooLarge, "body is larger than %d bytes", h.maxBody)
	}
	return body, nil
}

// methodNotAllowed answers 405 with the Allow header.
func methodNotAllowed(methods []string) http.Handler {
	allow := strings.Join(methods, ", ")
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Allow", allow)
		writeProblem(w, r, problem.Newf(http.StatusMethodNotAllowed, problem.CodeMethodNotAllowed,
			"%s %s is not served; use %s", r.Method, r.URL.Path, allow))
	})
}

// isJSON reports whether a Content-Type names JSON.
func isJSON(contentType string) bool {
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
func problemResponse(r *http.Request, p *Error) *StoredResponse {
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

func writeProblem(w http.ResponseWriter, r *http.Request, p *Error) {
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

// requestInfo is what the Handler learns about a request as it goes.
type requestInfo struct {
	id, trace, caller string
	replayed          bool
}

type requestInfoKey struct{}

// infoFrom returns the request's info; a request served outside ServeHTTP
// (a middleware calling a route directly) gets a fresh one.
func infoFrom(ctx context.Context) *requestInfo {
	if info, ok := ctx.Value(requestInfoKey{}).(*requestInfo); ok {
		return info
	}
	return &requestInfo{}
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

// call runs a decoded request.
type call func(ctx context.Context) (any, error)

// decoder decodes and validates a request body for svc.
type decoder func(svc Service, body []byte) (call, error)

// errNilResponse reports a Service that returned neither a response nor an
// error.
var errNilResponse = errors.New("router: the Service returned a nil response and a nil error")

// decodeWith returns the decoder of a Service method.
func decodeWith[Req any, P interface {
	*Req
	Validate() error
}, Resp any](method func(Service, context.Context, P) (*Resp, error)) decoder {
	return func(svc Service, body []byte) (call, error) {
		req := P(new(Req))
		if err := jsonbody.Unmarshal(body, req); err != nil {
			return nil, err
		}
		if err := req.Validate(); err != nil {
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

// decoderFor returns the decoder of op.
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
		return decodeWith(Service.DelegateV3)
	case OpValidateV3:
		return decodeWith(Service.ValidateV3)
	case OpFactcheck:
		return decodeWith(Service.Factcheck)
	}
	panic("router: no decoder for operation " + string(op)) // Routes and this switch list the same operations
}
