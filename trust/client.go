package trust

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/url"
	"slices"

	"github.com/vouchkit/vouch/internal/httpapi"
	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
)

// Client is a [Caller] that calls a remote trust service over HTTP (one
// served by [NewHandler]); it also fetches and verifies the service's
// receipts. Build it with [NewClient]; it is safe for concurrent use.
//
// It behaves as router.Client does. Errors: a non-2xx answer is an
// *[Error] (errors.As reaches it) holding the server's problem body, with
// the failing fields of an invalid request by JSON path and the server's
// request id; a body over the limit wraps router.ErrResponseTooLarge; an
// answer that does not decode, that lacks a member the interface always
// writes (status, confidence, evidence and trace_id of a Response; null or
// {} would read as a status of ""), or that gives a member twice or one
// field under two names of different case, whose status is not one the
// request's mode answers (see [Status]: "" or SELLER_VALID to a
// validation, say), or whose numbers are out of their bounds (a
// confidence or agreement outside [0, 1], counts of runs that are
// negative or add up to more than were launched), wraps
// router.ErrMalformedResponse and names the member; a transport failure,
// after retries, wraps the cause, and a done context gives the context's
// error. A status of RETRY, NEEDS_SPEC or INCONCLUSIVE is an answer, never
// an error.
//
// Retries: after a connection error, a 429, 502, 503 or 504, with backoff
// and jitter, honouring Retry-After, never after another status, nor
// after the service's own 502 all_replicas_failed or 504 timeout, whose
// runs ran (a retry would run them again). Every attempt of one call
// carries the same Idempotency-Key (generated, or set with
// [WithIdempotencyKey]), so the server runs the call at most once.
// The trace id of ctx (router.WithTraceID) travels in a traceparent
// header, and the server's Response carries it as trace_id; a call or
// report whose ctx carries a trace id that is no W3C trace id (32
// lowercase hex digits, not all zero) is refused with an error naming
// it, and nothing is sent.
//
// Deadlines: the server does not learn ctx's deadline, since the trust
// request has no member for it (router.Client sends one as
// policy.timeout_ms). When the deadline comes first, the call ends with
// ctx's error and the answer the server makes from the votes in is lost;
// a service that must answer by a deadline runs in process (New), where
// the call answers from the votes in before it.
type Client struct {
	cfg     httpapi.ClientConfig
	apiKey  string
	variant router.Variant
	core    *httpapi.Client
}

// String returns "trust.Client(<base URL>, <variant>)", the base URL without
// the password of its user info; it never shows the API key.
func (c *Client) String() string {
	return "trust.Client(" + httpapi.ShownURL(c.cfg.BaseURL) + ", " + string(c.variant) + ")"
}

// GoString is String, so that %#v does not print the key either.
func (c *Client) GoString() string { return c.String() }

// ClientOption configures a [Client].
type ClientOption func(*Client)

// WithAPIKey makes the Client send "Authorization: Bearer <key>" on the
// normal and trial variants. The x402 variant sends no key: payment is its
// credential.
func WithAPIKey(key string) ClientOption { return func(c *Client) { c.apiKey = key } }

// WithClientVariant sets the route the Client calls: router.VariantNormal
// (the default, [CallPath]), router.VariantTrial ([TrialCallPath]) or
// router.VariantX402 ([X402CallPath], which needs an *http.Client whose
// transport pays, such as x402.Transport, given with [WithHTTPClient]).
func WithClientVariant(v router.Variant) ClientOption { return func(c *Client) { c.variant = v } }

// WithHTTPClient sets the *http.Client that sends requests; nil means one
// with http.DefaultTransport. The Client never modifies it; its Timeout,
// if any, bounds each attempt.
func WithHTTPClient(hc *http.Client) ClientOption {
	return func(c *Client) { c.cfg.HTTPClient = hc }
}

// WithClientLogger sets the logger of attempts and retries (Debug) and
// failures (Error); nil means silent.
func WithClientLogger(l *slog.Logger) ClientOption { return func(c *Client) { c.cfg.Logger = l } }

// WithUserAgent sets the User-Agent header; the default is "vouch-trust".
func WithUserAgent(ua string) ClientOption { return func(c *Client) { c.cfg.UserAgent = ua } }

// WithRetry sets the retry policy; the default is
// router.DefaultRetryPolicy.
func WithRetry(p router.RetryPolicy) ClientOption { return func(c *Client) { c.cfg.Retry = p } }

// WithMaxResponseBytes sets the largest response body read; zero means
// router.DefaultMaxResponseBytes.
func WithMaxResponseBytes(n int64) ClientOption {
	return func(c *Client) { c.cfg.MaxResponseBytes = n }
}

type idempotencyKeyCtx struct{}

// WithIdempotencyKey returns a context that makes a [Client] call send key
// as its Idempotency-Key instead of a generated one. Use it to repeat a
// call whose outcome is unknown (a cancelled context says nothing about
// whether the server acted): the server answers a repeat within its
// window with the first response. It applies to trust calls
// ([Client.Call]) only: a report ([Client.Feedback],
// [Client.FeedbackVerdict]) made with the same context sends a key of its
// own, and the router calls a [Service] makes keep keys of their own.
func WithIdempotencyKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, idempotencyKeyCtx{}, key)
}

func idempotencyKeyFrom(ctx context.Context) string {
	k, _ := ctx.Value(idempotencyKeyCtx{}).(string)
	return k
}

// NewClient returns a Client for the trust service at baseURL (an absolute
// http or https URL; [CallPath] and the other paths are appended to it).
// It fails on a bad URL, an unknown variant or a negative bound.
func NewClient(baseURL string, opts ...ClientOption) (*Client, error) {
	c := &Client{
		cfg:     httpapi.ClientConfig{Name: "trust", BaseURL: baseURL, UserAgent: "vouch-trust", Retry: router.DefaultRetryPolicy()},
		variant: router.VariantNormal,
	}
	for _, o := range opts {
		o(c)
	}
	if _, ok := callPath(c.variant); !ok {
		return nil, fmt.Errorf("trust: NewClient: unknown variant %q", c.variant)
	}
	core, err := httpapi.NewClient(c.cfg)
	if err != nil {
		return nil, fmt.Errorf("trust: NewClient: %w", err)
	}
	c.core = core
	return c, nil
}

// Call implements [Caller]: it POSTs req to the trust service and returns
// its Response. An answer an agent should not act on (see checkAnswer),
// or one with no receipt when req asked for one (the service issues one
// with every answer that asked, or fails the call), wraps
// router.ErrMalformedResponse.
func (c *Client) Call(ctx context.Context, req *Request) (*Response, error) {
	if req == nil {
		return nil, fmt.Errorf("trust: Call: the request is nil")
	}
	path, _ := callPath(c.variant)
	call := httpapi.Call{Op: "call", Method: http.MethodPost, Path: path, Body: req,
		IdempotencyKey: idempotencyKeyFrom(ctx), Header: c.authHeader(c.variant),
		// result and retry_instructions may be null (docs/INTERFACE.md, 9.3).
		Required: []string{"status", "confidence", "evidence", "trace_id"}}
	var resp Response
	if err := c.core.Do(ctx, call, &resp); err != nil {
		return nil, err
	}
	if err := checkAnswer(req.Mode, &resp); err != nil {
		return nil, fmt.Errorf("trust: call response: %w: %v", router.ErrMalformedResponse, err)
	}
	if req.Receipt.Requested() && len(resp.Receipt) == 0 {
		return nil, fmt.Errorf("trust: call response: %w: receipt: absent, though the request asked for one (%s)", router.ErrMalformedResponse, req.Receipt.Mode)
	}
	return &resp, nil
}

// modeStatuses lists the statuses a call of mode answers; nil for a mode
// the interface does not know.
func modeStatuses(mode Mode) []Status {
	switch mode {
	case ModeDelegation, ModeValidation:
		return []Status{StatusValid, StatusInvalid, StatusRetry, StatusNeedsSpec}
	case ModeArbitration:
		return []Status{StatusSellerValid, StatusSellerInvalid, StatusInconclusive}
	}
	return nil
}

// checkAnswer checks a trust service's answer to a call of mode, which
// an agent may act on: a status the mode answers, a confidence and an
// agreement in [0, 1], and counts of runs that are not negative and add
// up.
func checkAnswer(mode Mode, r *Response) error {
	e := &r.Evidence
	switch want := modeStatuses(mode); {
	case want != nil && !slices.Contains(want, r.Status):
		return fmt.Errorf("status %q is not a status of %s (%v)", r.Status, mode, want)
	case !(r.Confidence >= 0 && r.Confidence <= 1):
		return fmt.Errorf("confidence %v is outside [0, 1]", r.Confidence)
	case !(e.Agreement >= 0 && e.Agreement <= 1):
		return fmt.Errorf("evidence.agreement %v is outside [0, 1]", e.Agreement)
	case e.Redundancy < 0 || e.Launched < 0 || e.Answered < 0 || e.Cancelled < 0 || e.Failed < 0 || e.Checked < 0:
		return fmt.Errorf("evidence counts a negative number of runs (redundancy %d, launched %d, answered %d, cancelled %d, failed %d, checked %d)",
			e.Redundancy, e.Launched, e.Answered, e.Cancelled, e.Failed, e.Checked)
	case e.Answered+e.Cancelled+e.Failed > e.Launched:
		return fmt.Errorf("evidence counts %d runs answered, cancelled or failed of %d launched", e.Answered+e.Cancelled+e.Failed, e.Launched)
	}
	return nil
}

// authHeader returns the Authorization header of a call in variant v.
func (c *Client) authHeader(v router.Variant) http.Header {
	if c.apiKey == "" || v == router.VariantX402 {
		return nil
	}
	return http.Header{"Authorization": {"Bearer " + c.apiKey}}
}

// FetchReceipt returns the receipt with id from the trust service (GET
// /api/v4/receipt/{receipt_id}): its JSON exactly as issued, the bytes the
// signature covers, to check with a receipt.Verifier or read with
// receipt.Parse. The service answers a receipt that is unknown, expired
// or not visible to the caller with the same 404 *Error; an answer that
// is not an object whose receipt_id is id (a server, or a cache before
// it, answering with another receipt, whose signature verifies as well),
// read as receipt.Parse reads it (by its exact name, in an object that
// repeats no member name), wraps router.ErrMalformedResponse.
// The API key is sent whatever the Client's variant: the endpoint is
// authenticated.
func (c *Client) FetchReceipt(ctx context.Context, id string) (json.RawMessage, error) {
	if id == "" {
		return nil, errors.New("trust: FetchReceipt: the receipt id is empty")
	}
	var data json.RawMessage
	call := httpapi.Call{Op: "fetch receipt", Method: http.MethodGet, Path: receipt.ReceiptPath + url.PathEscape(id),
		Header: c.authHeader(router.VariantNormal), Required: []string{"receipt_id"}}
	if err := c.core.Do(ctx, call, &data); err != nil {
		return nil, err
	}
	// The receipt_id is read as receipt.Parse reads it: by its exact name
	// (encoding/json would also take "RECEIPT_ID"), and in an object
	// that repeats no member name (it would keep the last copy).
	var members map[string]json.RawMessage
	if err := json.Unmarshal(data, &members); err != nil {
		return nil, fmt.Errorf("trust: fetch receipt response: %w: %w", router.ErrMalformedResponse, err)
	}
	if err := httpapi.CheckAnswer(data, &members); err != nil {
		return nil, fmt.Errorf("trust: fetch receipt response: %w: %v", router.ErrMalformedResponse, err)
	}
	var got string
	if json.Unmarshal(members["receipt_id"], &got) != nil || got != id {
		return nil, fmt.Errorf("trust: fetch receipt response: %w: receipt_id %.80s is not %q", router.ErrMalformedResponse, members["receipt_id"], id)
	}
	return data, nil
}

// VerifyReceipt asks the trust service to check a receipt (POST
// /api/v4/verify_receipt) and returns its list of checks. A receipt that
// fails a check is an answer (Valid false), not an error. An answer that
// contradicts itself (valid beside a failed check, or not valid with none;
// as_issued without a passed signature check; a check of a status that is
// not passed, failed or skipped) wraps router.ErrMalformedResponse.
func (c *Client) VerifyReceipt(ctx context.Context, req *receipt.VerifyRequest) (*receipt.VerifyResponse, error) {
	if req == nil {
		return nil, errors.New("trust: VerifyReceipt: the request is nil")
	}
	var resp receipt.VerifyResponse
	call := httpapi.Call{Op: "verify receipt", Method: http.MethodPost, Path: receipt.VerifyPath, Body: req,
		Header: c.authHeader(router.VariantNormal), Required: []string{"valid", "as_issued", "checks"}}
	if err := c.core.Do(ctx, call, &resp); err != nil {
		return nil, err
	}
	if err := checkVerifyResponse(&resp); err != nil {
		return nil, fmt.Errorf("trust: verify receipt response: %w: %v", router.ErrMalformedResponse, err)
	}
	return &resp, nil
}

// checkVerifyResponse checks that a verify_receipt answer agrees with
// itself: valid when no check failed, as_issued only with the signature
// check passed.
func checkVerifyResponse(r *receipt.VerifyResponse) error {
	failed, signed := false, false
	for i, c := range r.Checks {
		switch c.Status {
		case receipt.CheckFailed:
			failed = true
		case receipt.CheckPassed:
			signed = signed || c.Name == receipt.CheckSignature
		case receipt.CheckSkipped:
		default:
			return fmt.Errorf("checks[%d].status %q is not passed, failed or skipped", i, c.Status)
		}
	}
	if r.Valid == failed {
		return fmt.Errorf("valid is %t, but %d checks include a failed one: %t", r.Valid, len(r.Checks), failed)
	}
	if r.AsIssued && !signed {
		return errors.New("as_issued is true, but no signature check passed")
	}
	return nil
}
