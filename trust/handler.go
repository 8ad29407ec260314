package trust

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
	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/x402"
)

// The paths of the trust call. The interface leaves the path open: vouch
// serves the call at CallPath, and its trial and x402 variants beside it,
// placed as the router's variants are.
const (
	// CallPath is the trust call for authenticated callers.
	CallPath = "/api/v4/trust"
	// TrialCallPath is the trust call without a credential, rate limited
	// per caller.
	TrialCallPath = "/api/v4/trial/trust"
	// X402CallPath is the trust call paid per call with x402.
	X402CallPath = "/api/v4/x402/trust"
)

// callPath returns the path of the trust call in variant v.
func callPath(v router.Variant) (string, bool) {
	switch v {
	case "", router.VariantNormal:
		return CallPath, true
	case router.VariantTrial:
		return TrialCallPath, true
	case router.VariantX402:
		return X402CallPath, true
	}
	return "", false
}

// Handler serves a [Caller] over HTTP:
//
//	POST /api/v4/trust                  the trust call: a Request in, a Response out
//	POST /api/v4/trial/trust            the same, without a credential, rate limited
//	POST /api/v4/x402/trust             the same, paid per call
//	POST /api/v4/feedback               a call's outcome, right or wrong (a FeedbackRequest)
//	GET  /api/v4/receipt/{receipt_id}   a receipt (with WithReceiptEndpoints)
//	POST /api/v4/verify_receipt         a receipt's checks (with WithReceiptEndpoints)
//	GET  /api/v4/log, /api/v4/receipt/{receipt_id}/proof, /api/v4/log/consistency
//	                                    the receipts' transparency log (with WithReceiptLog)
//
// It runs the pipeline of router.Handler, with the same configuration
// types and the same answers: a request id on every response, the W3C
// traceparent echoed and its trace id passed to the Caller (so the
// Response's trace_id is the caller's), 404, 405, 415 and 413 problems, a
// 400 naming the JSON field path of invalid input ("task.claimed_result"),
// 401 from the Authenticator on the normal route, 429 with Retry-After
// over the trial limit, the x402 middleware (or 501 with code
// x402_not_configured without one), replay of a repeated Idempotency-Key,
// and the Caller's *Error with its own status (a deadline 504, any other
// error a 500 that reveals nothing of it). See router.Handler for the
// details.
//
// The Caller's context names the caller ([WithCaller], which owns the
// call's receipts): on the trial route "trial:" and its trial caller
// ("trial:ip:<address>", "trial:key:<name>" for a request with a
// credential, or "trial:" and what [WithTrialCaller] returns), so that no
// credential reaches a trial call's receipt or reports on it; on the
// other routes the name the Authenticator gives the request's credential
// when it carries one it accepts, and otherwise "payer:" and the payer's
// address on the x402 route.
//
// A Handler is safe for concurrent use. Build it with [NewHandler].
type Handler struct {
	cfg      httpapi.Config
	receipts *receipt.Handler // the fields set by WithReceiptEndpoints, or nil
	log      *receipt.Log     // set by WithReceiptLog, or nil
	srv      *httpapi.Server
	calls    map[string]*atomic.Int64 // by "METHOD PATH"; the map is only read after NewHandler
}

// HandlerOption configures a [Handler].
type HandlerOption func(*Handler)

// WithAuthenticator sets how callers of the normal route are identified;
// router.KeyAuthenticator builds one from a table of API keys. Without
// one, every request to the normal route is refused with 401.
func WithAuthenticator(a router.Authenticator) HandlerOption {
	return func(h *Handler) { h.cfg.Authenticator = a }
}

// WithTrialLimit sets the rate limit of the trial route; the zero value
// means router's defaults. It cannot be combined with [WithRateLimiter].
func WithTrialLimit(l router.TrialLimit) HandlerOption {
	return func(h *Handler) { h.cfg.TrialLimit = l }
}

// WithRateLimiter replaces the in-memory token bucket of the trial route
// with l (see router.RateLimiter). A router.Handler and a trust Handler
// given the same limiter share each caller's allowance.
func WithRateLimiter(l router.RateLimiter) HandlerOption {
	return func(h *Handler) { h.cfg.RateLimiter = l }
}

// WithTrialCaller sets how trial callers are told apart; the default is as
// for router.WithTrialCaller.
func WithTrialCaller(f func(*http.Request) string) HandlerOption {
	return func(h *Handler) { h.cfg.TrialCaller = f }
}

// WithTrustedProxies sets the reverse proxies whose client address
// headers are believed, as router.WithTrustedProxies does.
func WithTrustedProxies(prefixes ...netip.Prefix) HandlerOption {
	return func(h *Handler) { h.cfg.TrustedProxies = prefixes }
}

// WithTrustedUnixProxy believes the client address headers of a reverse
// proxy that reaches the Handler on a Unix domain socket, as
// router.WithTrustedUnixProxy does.
func WithTrustedUnixProxy() HandlerOption {
	return func(h *Handler) { h.cfg.TrustUnixProxy = true }
}

// WithX402 sets the middleware that guards the x402 route (x402.Middleware
// has this shape). Without it, the x402 route answers 501.
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
// router.MemoryIdempotencyStore; a zero window means
// router.DefaultIdempotencyWindow.
func WithIdempotency(store router.IdempotencyStore, window time.Duration) HandlerOption {
	return func(h *Handler) { h.cfg.Idempotency, h.cfg.IdempotencyWindow = store, window }
}

// WithMaxBodyBytes sets the largest request body accepted; zero means
// router.DefaultMaxBodyBytes.
func WithMaxBodyBytes(n int64) HandlerOption {
	return func(h *Handler) { h.cfg.MaxBodyBytes = n }
}

// WithHandlerLogger sets the logger that receives one line per request
// (Info; Error for a 5xx). Nil means silent. The line of a trust call
// names as trace_id the trace_id of its answer.
func WithHandlerLogger(l *slog.Logger) HandlerOption {
	return func(h *Handler) { h.cfg.Logger = l }
}

// WithHandlerClock sets the clock of rate limits and idempotency windows;
// nil means time.Now.
func WithHandlerClock(now func() time.Time) HandlerOption {
	return func(h *Handler) { h.cfg.Now = now }
}

// WithReceiptEndpoints serves the receipt endpoints beside
// the trust call, through the receipt package's handler (see
// receipt.Handler for the bodies and answers):
//
//   - GET /api/v4/receipt/{receipt_id} answers the receipt in store,
//     exactly as issued, to the caller the Authenticator names when that
//     caller is the receipt's owner, or a counterparty of a shared
//     receipt; any other receipt id is the same 404, so that existence is
//     not leaked. The owner recorded at issue must therefore be the name
//     the Authenticator gives the calling integration.
//   - POST /api/v4/verify_receipt checks a receipt's schema, signature,
//     key window, hashes and expiry with v; a nil v answers 503.
//
// Both are authenticated like the normal route (401 without a credential
// the Authenticator accepts), and get the request id, traceparent, panic
// recovery and logging of every route; verify_receipt takes its body as
// the trust call does (Content-Type application/json, 415 otherwise; an
// Idempotency-Key sent empty, twice or of another form, 400), but keeps
// no answer to replay, since it changes nothing.
// Without this option the paths answer 404.
func WithReceiptEndpoints(store receipt.Store, v *receipt.Verifier) HandlerOption {
	return func(h *Handler) { h.receipts = &receipt.Handler{Store: store, Verifier: v} }
}

// NewHandler returns a Handler serving c, usually a [Service]. It fails
// when c is nil, an option is out of range, or both a trial limit and a
// rate limiter are set.
func NewHandler(c Caller, opts ...HandlerOption) (*Handler, error) {
	if c == nil {
		return nil, errors.New("trust: NewHandler: the Caller is nil")
	}
	h := &Handler{}
	for _, o := range opts {
		o(h)
	}
	h.cfg.Name = "trust"
	call := prepareCall(c)
	h.cfg.Endpoints = []httpapi.Endpoint{
		{Method: http.MethodPost, Path: CallPath, Access: httpapi.Key, Prepare: call},
		{Method: http.MethodPost, Path: TrialCallPath, Access: httpapi.Trial, Prepare: call},
		{Method: http.MethodPost, Path: X402CallPath, Access: httpapi.Paid, Prepare: call},
		{Method: http.MethodPost, Path: FeedbackPath, Access: httpapi.Key, Prepare: prepareFeedback(c)},
	}
	if h.receipts != nil {
		rh := &receipt.Handler{
			Store: h.receipts.Store, Verifier: h.receipts.Verifier, Caller: principal,
			Now: h.cfg.Now, MaxBodyBytes: h.cfg.MaxBodyBytes, Logger: h.cfg.Logger, Log: h.log,
		}
		h.cfg.Endpoints = append(h.cfg.Endpoints,
			httpapi.Endpoint{Method: http.MethodGet, Path: receipt.ReceiptPath + "{receipt_id}", Access: httpapi.Key, Handler: rh},
			httpapi.Endpoint{Method: http.MethodPost, Path: receipt.VerifyPath, Access: httpapi.Key, Handler: jsonBody(rh)})
		h.cfg.Endpoints = append(h.cfg.Endpoints, logEndpoints(rh)...)
	}
	h.countCalls()
	srv, err := httpapi.NewServer(h.cfg)
	if err != nil {
		return nil, fmt.Errorf("trust: NewHandler: %w", err)
	}
	h.srv = srv
	return h, nil
}

// jsonBody checks a request's query and headers as the Server does for
// the endpoints whose body it reads: no query parameter, a JSON
// Content-Type without a content coding, and an Idempotency-Key, if one
// is sent, sent once as 1 to 255 visible ASCII characters (a 400 or 415
// problem otherwise), before next reads the body. next keeps no answer
// to replay: it changes nothing, and answers each request afresh.
func jsonBody(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !httpapi.CheckNoQuery(w, r) || !httpapi.CheckJSONBody(w, r) {
			return
		}
		if _, p := httpapi.IdempotencyKey(r.Header); p != nil {
			httpapi.WriteProblem(w, r, p)
			return
		}
		next.ServeHTTP(w, r)
	})
}

// ServeHTTP implements http.Handler.
func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h.srv.ServeHTTP(w, r)
}

// owner names the integration that makes a trust call, for [WithCaller]:
// the name the Authenticator gives its credential, which is also who may
// fetch its receipts; an x402 caller without one is named by its payer
// ("payer:<address>"), and a trial caller, with a credential or without,
// by "trial:" and its trial caller ("trial:ip:<address>"): they can take
// their receipts inline only, and no credential reaches them.
func owner(ctx context.Context) string { return httpapi.Owner(ctx) }

// unfetchable refuses a detached receipt that no one could fetch: one
// that names no counterparty (private, or shared or public with none),
// asked by a caller whose calls no credential owns (a trial call, or an
// x402 call without a key: see owner), since the receipt routes answer
// credentials only. Inline, or shared with counterparties, it reaches its
// readers.
func unfetchable(ctx context.Context, rr receipt.Request) []problem.FieldError {
	if rr.Mode != receipt.DeliveryDetached || len(rr.Counterparties) > 0 || owner(ctx) == httpapi.Principal(ctx) {
		return nil
	}
	return []problem.FieldError{{Field: "receipt.mode", Rule: "fetchable",
		Message: "detached: a receipt of a call made without a credential (a trial or x402 call) that names no counterparty is fetched by no one; ask for it inline, or share it with counterparties"}}
}

// principal is the receipt handler's caller identity: the name the
// Authenticator gave the request's caller.
func principal(r *http.Request) (string, error) {
	if p := httpapi.Principal(r.Context()); p != "" {
		return p, nil
	}
	return "", router.ErrNoCredentials
}

// errNilResponse reports a Caller that returned neither a response nor an
// error.
var errNilResponse = errors.New("trust: the Caller returned a nil response and a nil error")

// prepareCall returns the endpoint function of the trust call on c: decode
// and validate the envelope, then call c.
func prepareCall(c Caller) func(*http.Request, []byte) (httpapi.Run, error) {
	schema := jsonbody.SchemaOf(new(Request))
	return func(r *http.Request, body []byte) (httpapi.Run, error) {
		req := new(Request)
		if err := jsonbody.Unmarshal(body, req); err != nil {
			return nil, jsonbody.Refuse(err, schema.Unknown(body))
		}
		unknown, zeros := schema.Inspect(body)
		empty := append(validate.Zeros(zeros), emptyReceiptMembers(req.Receipt, zeros)...)
		empty = append(empty, unfetchable(r.Context(), req.Receipt)...)
		if err := jsonbody.Refuse(jsonbody.Refuse(req.Validate(), empty), unknown); err != nil {
			return nil, err
		}
		return func(ctx context.Context) (any, error) {
			resp, err := c.Call(WithCaller(ctx, owner(ctx)), req)
			if err == nil && resp == nil {
				err = errNilResponse
			}
			if err != nil {
				return nil, err
			}
			httpapi.AnswerTrace(ctx, resp.TraceID) // the request's log line names it
			return resp, nil
		}, nil
	}
}

// countCalls makes each endpoint count the requests it admits.
func (h *Handler) countCalls() {
	h.calls = make(map[string]*atomic.Int64, len(h.cfg.Endpoints))
	for i := range h.cfg.Endpoints {
		ep := &h.cfg.Endpoints[i]
		n := new(atomic.Int64)
		h.calls[ep.Method+" "+ep.Path] = n
		ep.Admitted = func() { n.Add(1) }
	}
}

// Calls counts, by "METHOD PATH" ("POST /api/v4/trust"), the requests
// each route of the Handler admitted since NewHandler: past the
// credential check, the trial limit or the payment, whatever their
// outcome, as router.Status counts the router's. Every route is listed,
// with zero if need be. Pass it to router.WithStatusCalls to report the
// counts on GET /api/v1/status. It is safe to call concurrently with
// requests.
func (h *Handler) Calls() map[string]int64 {
	out := make(map[string]int64, len(h.calls))
	for route, n := range h.calls {
		out[route] = n.Load()
	}
	return out
}
