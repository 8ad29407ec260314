package router

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/vouchkit/vouch/internal/problem"
)

// Client is a [Service] that calls a remote router over HTTP: each method
// POSTs its request as JSON to the operation's route and decodes the
// answer. Build it with [NewClient]; it is safe for concurrent use.
//
// Errors: a non-2xx answer is an *[Error] (errors.As reaches it) holding
// the server's problem body, or, when the body is not a problem, one made
// from the status; its RequestID is the server's request id. A transport
// failure, after retries, is an error wrapping the cause, and a done
// context gives the context's error. A verdict of INVALID or RETRY is a
// result, never an error.
//
// Retries: a call is retried, with exponential backoff and jitter between
// the policy's bounds, after a connection error, a 429, 502, 503 or 504,
// honouring Retry-After; never after another status. Every attempt of one
// call carries the same Idempotency-Key (generated, or set with
// [WithIdempotencyKey]), so a [Handler] runs the call at most once.
// Waits end when ctx does.
type Client struct {
	base      string
	apiKey    string
	variant   Variant
	hc        *http.Client
	log       *slog.Logger
	userAgent string
	retry     RetryPolicy
	maxResp   int64
	rc        *retryablehttp.Client
}

// RetryPolicy bounds the retries of a [Client].
type RetryPolicy struct {
	// Max is the number of retries after the first attempt; zero means
	// none.
	Max int
	// WaitMin and WaitMax bound the backoff between attempts: the n-th
	// retry waits about WaitMin·2ⁿ, at most WaitMax. Zero means the
	// default's value.
	WaitMin, WaitMax time.Duration
	// RetryAfterMax is the longest Retry-After the Client waits for; a
	// longer one (or one past ctx's deadline) ends the retries and the 429
	// or 503 is returned. Zero means the default's value.
	RetryAfterMax time.Duration
}

// DefaultRetryPolicy returns the policy of a Client built without
// [WithRetry]: 3 retries, waits from 250ms to 5s, Retry-After up to 30s.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{Max: 3, WaitMin: 250 * time.Millisecond, WaitMax: 5 * time.Second, RetryAfterMax: 30 * time.Second}
}

// DefaultMaxResponseBytes is the largest response body a [Client] or an
// [HTTPWorker] reads unless told otherwise.
const DefaultMaxResponseBytes = 10 << 20

// ClientOption configures a [Client].
type ClientOption func(*Client)

// WithAPIKey makes the Client send "Authorization: Bearer <key>" on the
// normal and trial variants (a trial server may count a known key apart
// from an address). The x402 variant sends no key: payment is its
// credential.
func WithAPIKey(key string) ClientOption { return func(c *Client) { c.apiKey = key } }

// WithClientVariant sets the variant of the Client's calls; the default is
// VariantNormal. A call's context can override it with [WithVariant].
//
// The x402 variant needs an *http.Client whose transport pays (the
// x402.Transport): pass it with [WithHTTPClient]. Without one, a call
// returns the server's 402 as an *Error.
func WithClientVariant(v Variant) ClientOption { return func(c *Client) { c.variant = v } }

// WithHTTPClient sets the *http.Client that sends requests; nil means one
// with http.DefaultTransport. The Client never modifies it; its Timeout,
// if any, bounds each attempt.
func WithHTTPClient(hc *http.Client) ClientOption { return func(c *Client) { c.hc = hc } }

// WithClientLogger sets the logger of attempts and retries (Debug) and
// failures (Error); nil means silent.
func WithClientLogger(l *slog.Logger) ClientOption { return func(c *Client) { c.log = l } }

// WithUserAgent sets the User-Agent header; the default is "vouch-router".
func WithUserAgent(ua string) ClientOption { return func(c *Client) { c.userAgent = ua } }

// WithRetry sets the retry policy; the default is [DefaultRetryPolicy].
func WithRetry(p RetryPolicy) ClientOption { return func(c *Client) { c.retry = p } }

// WithMaxResponseBytes sets the largest response body read; zero means
// DefaultMaxResponseBytes. A larger one fails the call with
// [ErrResponseTooLarge].
func WithMaxResponseBytes(n int64) ClientOption { return func(c *Client) { c.maxResp = n } }

// NewClient returns a Client for the router at baseURL (an absolute http
// or https URL; route paths such as /api/v2/validate are appended to it).
// It fails on a bad URL, an unknown variant or a negative bound.
func NewClient(baseURL string, opts ...ClientOption) (*Client, error) {
	u, err := url.Parse(baseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("router: NewClient: base URL %q is not an absolute http or https URL", baseURL)
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("router: NewClient: base URL %q has a query or fragment", baseURL)
	}
	c := &Client{
		base:      strings.TrimRight(u.String(), "/"),
		variant:   VariantNormal,
		userAgent: "vouch-router",
		retry:     DefaultRetryPolicy(),
	}
	for _, o := range opts {
		o(c)
	}
	switch c.variant {
	case "":
		c.variant = VariantNormal
	case VariantNormal, VariantTrial, VariantX402:
	default:
		return nil, fmt.Errorf("router: NewClient: unknown variant %q", c.variant)
	}
	def := DefaultRetryPolicy()
	switch {
	case c.retry.Max < 0 || c.retry.WaitMin < 0 || c.retry.WaitMax < 0 || c.retry.RetryAfterMax < 0:
		return nil, fmt.Errorf("router: NewClient: retry policy %+v has a negative member", c.retry)
	case c.maxResp < 0:
		return nil, fmt.Errorf("router: NewClient: response limit %d is negative", c.maxResp)
	}
	if c.retry.WaitMin == 0 {
		c.retry.WaitMin = def.WaitMin
	}
	if c.retry.WaitMax == 0 {
		c.retry.WaitMax = max(def.WaitMax, c.retry.WaitMin)
	}
	if c.retry.RetryAfterMax == 0 {
		c.retry.RetryAfterMax = def.RetryAfterMax
	}
	if c.maxResp == 0 {
		c.maxResp = DefaultMaxResponseBytes
	}
	if c.hc == nil {
		c.hc = &http.Client{}
	}
	c.rc = &retryablehttp.Client{
		HTTPClient:   c.hc,
		RetryWaitMin: c.retry.WaitMin,
		RetryWaitMax: c.retry.WaitMax,
		RetryMax:     c.retry.Max,
		CheckRetry:   c.checkRetry,
		Backoff:      backoff,
		ErrorHandler: giveUp,
	}
	if c.log != nil {
		c.rc.Logger = c.log
	}
	return c, nil
}

// DelegateV1 implements [Service].
func (c *Client) DelegateV1(ctx context.Context, req *DelegateV1Request) (*DelegateV1Response, error) {
	return roundTrip[DelegateV1Response](ctx, c, OpDelegateV1, req)
}

// ValidateV1 implements [Service].
func (c *Client) ValidateV1(ctx context.Context, req *ValidateV1Request) (*ValidateV1Response, error) {
	return roundTrip[ValidateV1Response](ctx, c, OpValidateV1, req)
}

// DelegateV2 implements [Service].
func (c *Client) DelegateV2(ctx context.Context, req *DelegateV2Request) (*DelegateV2Response, error) {
	return roundTrip[DelegateV2Response](ctx, c, OpDelegateV2, req)
}

// ValidateV2 implements [Service].
func (c *Client) ValidateV2(ctx context.Context, req *ValidateV2Request) (*ValidateV2Response, error) {
	return roundTrip[ValidateV2Response](ctx, c, OpValidateV2, req)
}

// DelegateV3 implements [Service].
func (c *Client) DelegateV3(ctx context.Context, req *DelegateV3Request) (*DelegateV3Response, error) {
	return roundTrip[DelegateV3Response](ctx, c, OpDelegateV3, req)
}

// ValidateV3 implements [Service].
func (c *Client) ValidateV3(ctx context.Context, req *ValidateV3Request) (*ValidateV3Response, error) {
	return roundTrip[ValidateV3Response](ctx, c, OpValidateV3, req)
}

// Factcheck implements [Service].
func (c *Client) Factcheck(ctx context.Context, req *FactcheckRequest) (*FactcheckResponse, error) {
	return roundTrip[FactcheckResponse](ctx, c, OpFactcheck, req)
}

// roundTrip sends req to op's route and decodes the answer into a Resp.
func roundTrip[Resp, Req any](ctx context.Context, c *Client, op Operation, req *Req) (*Resp, error) {
	if req == nil {
		return nil, fmt.Errorf("router: %s: the request is nil", op)
	}
	var resp Resp
	if err := c.do(ctx, op, req, &resp); err != nil {
		return nil, err
	}
	return &resp, nil
}

func (c *Client) do(ctx context.Context, op Operation, in, out any) error {
	v := VariantFrom(ctx)
	if v == "" {
		v = c.variant
	}
	path, ok := RoutePath(op, v)
	if !ok {
		return fmt.Errorf("router: %s in variant %q: %w", op, v, ErrNoVariant)
	}
	body, err := json.Marshal(in)
	if err != nil {
		return fmt.Errorf("router: encoding %s request: %w", op, err)
	}
	req, err := retryablehttp.NewRequestWithContext(ctx, http.MethodPost, c.base+path, body)
	if err != nil {
		return fmt.Errorf("router: building %s request: %w", op, err)
	}
	h := req.Header
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json, application/problem+json")
	h.Set("User-Agent", c.userAgent)
	if c.apiKey != "" && v != VariantX402 {
		h.Set("Authorization", "Bearer "+c.apiKey)
	}
	key := idempotencyKeyFrom(ctx)
	if key == "" {
		key = "idem_" + randomHex(16)
	}
	h.Set(HeaderIdempotencyKey, key)
	if trace := TraceIDFrom(ctx); len(trace) == 32 && lowerHex(trace) && !allZero(trace) {
		h.Set(HeaderTraceparent, newTraceparent(trace, "01"))
	}

	resp, err := c.rc.Do(req)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
			err = fmt.Errorf("%w (%w)", ctxErr, err)
		}
		return fmt.Errorf("router: %s %s: %w", op, path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, c.maxResp+1))
	if err != nil {
		return fmt.Errorf("router: reading %s response: %w", op, err)
	}
	if int64(len(data)) > c.maxResp {
		return fmt.Errorf("router: %s response over %d bytes: %w", op, c.maxResp, ErrResponseTooLarge)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return responseProblem(resp, data)
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("router: decoding %s response: %w: %w", op, ErrMalformedResponse, err)
	}
	return nil
}

// responseProblem returns the *Error of a non-2xx response: its problem
// body, or one made from the status when the body is not a problem. The
// HTTP status wins over the body's, and the X-Request-Id header fills a
// missing request_id.
func responseProblem(resp *http.Response, body []byte) *Error {
	var p Error
	if err := json.Unmarshal(body, &p); err != nil || p.Status == 0 && p.Title == "" && p.Code == "" {
		detail := strings.TrimSpace(string(body))
		if len(detail) > 200 {
			detail = detail[:200] + "…"
		}
		p = *problem.New(resp.StatusCode, codeForStatus(resp.StatusCode), detail)
	}
	p.Status = resp.StatusCode
	if p.Title == "" {
		p.Title = http.StatusText(resp.StatusCode)
	}
	if p.RequestID == "" {
		p.RequestID = resp.Header.Get(HeaderRequestID)
	}
	return &p
}

// codeForStatus names the usual code of a status, for a response whose
// body is not a problem.
func codeForStatus(status int) Code {
	switch status {
	case http.StatusBadRequest:
		return problem.CodeInvalidRequest
	case http.StatusUnauthorized:
		return problem.CodeUnauthorized
	case http.StatusPaymentRequired:
		return problem.CodePaymentRequired
	case http.StatusForbidden:
		return problem.CodeForbidden
	case http.StatusNotFound:
		return problem.CodeNotFound
	case http.StatusMethodNotAllowed:
		return problem.CodeMethodNotAllowed
	case http.StatusConflict:
		return problem.CodeConflict
	case http.StatusUnprocessableEntity:
		return problem.CodeUnprocessable
	case http.StatusRequestEntityTooLarge:
		return problem.CodeBodyTooLarge
	case http.StatusUnsupportedMediaType:
		return problem.CodeUnsupportedMediaType
	case http.StatusTooManyRequests:
		return problem.CodeRateLimited
	case http.StatusServiceUnavailable:
		return problem.CodeUnavailable
	case http.StatusGatewayTimeout:
		return problem.CodeTimeout
	}
	if status >= 500 {
		return problem.CodeInternal
	}
	return ""
}

// checkRetry is the Client's retryablehttp.CheckRetry: retry connection
// errors and 429, 502, 503, 504, unless ctx is done or the server asks to
// wait longer than the policy allows or ctx's deadline leaves.
func (c *Client) checkRetry(ctx context.Context, resp *http.Response, err error) (bool, error) {
	if ctx.Err() != nil {
		return false, ctx.Err()
	}
	if err != nil {
		return retryableTransportError(err), err
	}
	switch resp.StatusCode {
	case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
	default:
		return false, nil
	}
	if wait, ok := retryAfter(resp); ok {
		if wait > c.retry.RetryAfterMax {
			return false, nil
		}
		if deadline, ok := ctx.Deadline(); ok && time.Until(deadline) < wait {
			return false, nil
		}
	}
	return true, nil
}

// retryableTransportError reports whether err, from sending a request, is
// a network failure worth another attempt: not a bad certificate, and not
// an error of a transport's own (such as a payment the x402 transport
// refused to make).
func retryableTransportError(err error) bool {
	var ue *url.Error
	if errors.As(err, &ue) {
		err = ue.Err
	}
	var ne net.Error
	return errors.As(err, &ne) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF)
}

// backoff is the Client's retryablehttp.Backoff: the server's Retry-After
// when it sends one, otherwise min·2ⁿ capped at max, with jitter over its
// upper half.
func backoff(min, max time.Duration, attempt int, resp *http.Response) time.Duration {
	if resp != nil {
		if wait, ok := retryAfter(resp); ok {
			return wait
		}
	}
	d := max
	if attempt < 30 {
		d = min << attempt
	}
	if d > max || d <= 0 {
		d = max
	}
	if half := int64(d / 2); half > 0 {
		d = time.Duration(half + rand.Int64N(half+1))
	}
	return d
}

// retryAfter parses a Retry-After header: seconds or an HTTP date.
func retryAfter(resp *http.Response) (time.Duration, bool) {
	v := strings.TrimSpace(resp.Header.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.ParseInt(v, 10, 64); err == nil && secs >= 0 {
		return time.Duration(min(secs, 1<<20)) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(0, time.Until(t)), true
	}
	return 0, false
}

// giveUp is the Client's retryablehttp.ErrorHandler: the last response, if
// there is one, goes back to the caller to become an *Error; otherwise the
// last error, with the count of attempts.
func giveUp(resp *http.Response, err error, attempts int) (*http.Response, error) {
	if resp != nil && err == nil {
		return resp, nil
	}
	if resp != nil {
		resp.Body.Close()
	}
	if err == nil {
		err = errors.New("no response")
	}
	return nil, fmt.Errorf("giving up after %d attempt(s): %w", attempts, err)
}
