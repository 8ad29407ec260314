package httpapi

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
	"unicode/utf8"

	"github.com/hashicorp/go-retryablehttp"

	"github.com/vouchkit/vouch/internal/jsonbody"
	"github.com/vouchkit/vouch/internal/telemetry"
	"github.com/vouchkit/vouch/internal/traceparent"
	"github.com/vouchkit/vouch/problem"
)

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

// DefaultRetryPolicy returns the usual policy: 3 retries, waits from 250ms
// to 5s, Retry-After up to 30s.
func DefaultRetryPolicy() RetryPolicy {
	return RetryPolicy{Max: 3, WaitMin: 250 * time.Millisecond, WaitMax: 5 * time.Second, RetryAfterMax: 30 * time.Second}
}

// DefaultMaxResponseBytes is the largest response body a client reads
// unless told otherwise.
const DefaultMaxResponseBytes = 10 << 20

// ClientConfig configures a [Client].
type ClientConfig struct {
	// Name prefixes errors ("router", "trust").
	Name string
	// BaseURL is an absolute http or https URL without query or fragment;
	// call paths are appended to it.
	BaseURL string
	// HTTPClient sends the requests; nil means one with
	// http.DefaultTransport. It is never modified: the Client sends
	// through a copy that refuses a redirect to another origin
	// ([SameOrigin]).
	HTTPClient *http.Client
	// Logger receives attempts and retries (Debug) and failures (Error);
	// nil is silent.
	Logger *slog.Logger
	// UserAgent is the User-Agent header.
	UserAgent string
	// Retry is the retry policy, taken as it is: Max zero means no retry;
	// zero durations mean DefaultRetryPolicy's.
	Retry RetryPolicy
	// MaxResponseBytes is the largest response body read; zero means
	// DefaultMaxResponseBytes.
	MaxResponseBytes int64
}

// Client sends calls to one server with retries. It is safe for
// concurrent use. Build it with [NewClient].
//
// Retries: a call is retried, with exponential backoff and jitter between
// the policy's bounds, after a connection error, a 429, 502, 503 or 504,
// honouring Retry-After; never after another status, nor after a 502
// all_replicas_failed or 504 timeout problem, whose work ran (a retry
// would run it again). Every attempt of one call with a body carries the
// same Idempotency-Key, so a [Server] runs it at most once. Waits end
// when ctx does.
//
// Redirects: one on the server's origin is followed; one to another
// scheme or host fails the call, unretried, with an error wrapping
// [ErrRedirect], since a paying transport would pay that host.
type Client struct {
	name, base, userAgent string
	retry                 RetryPolicy
	maxResp               int64
	rc                    *retryablehttp.Client
}

// NewClient returns a Client for cfg. It fails on a bad URL or a negative
// bound.
func NewClient(cfg ClientConfig) (*Client, error) {
	u, err := url.Parse(cfg.BaseURL)
	if err != nil {
		return nil, errors.New("base URL is not an absolute http or https URL")
	}
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return nil, fmt.Errorf("base URL %q is not an absolute http or https URL", shownURL(u))
	}
	if u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("base URL %q has a query or fragment", shownURL(u))
	}
	p := cfg.Retry
	switch {
	case p.Max < 0 || p.WaitMin < 0 || p.WaitMax < 0 || p.RetryAfterMax < 0:
		return nil, fmt.Errorf("retry policy %+v has a negative member", p)
	case cfg.MaxResponseBytes < 0:
		return nil, fmt.Errorf("response limit %d is negative", cfg.MaxResponseBytes)
	}
	def := DefaultRetryPolicy()
	if p.WaitMin == 0 {
		p.WaitMin = def.WaitMin
	}
	if p.WaitMax == 0 {
		p.WaitMax = max(def.WaitMax, p.WaitMin)
	}
	if p.RetryAfterMax == 0 {
		p.RetryAfterMax = def.RetryAfterMax
	}
	c := &Client{
		name:      cfg.Name,
		base:      strings.TrimRight(u.String(), "/"),
		userAgent: cfg.UserAgent,
		retry:     p,
		maxResp:   cfg.MaxResponseBytes,
	}
	if c.maxResp == 0 {
		c.maxResp = DefaultMaxResponseBytes
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	c.rc = &retryablehttp.Client{
		HTTPClient:   SameOrigin(hc),
		RetryWaitMin: p.WaitMin,
		RetryWaitMax: p.WaitMax,
		RetryMax:     p.Max,
		CheckRetry:   c.checkRetry,
		Backoff:      backoff,
		ErrorHandler: giveUp,
	}
	if cfg.Logger != nil {
		c.rc.Logger = cfg.Logger
	}
	return c, nil
}

// Call is one logical call of a [Client].
type Call struct {
	// Op names the call in errors ("validate_v2", "trust").
	Op string
	// Method and Path say where the call goes; Path is appended to the
	// base URL.
	Method, Path string
	// Header holds extra headers, such as Authorization; nil means none.
	Header http.Header
	// Body is encoded as the JSON body; nil sends none.
	Body any
	// IdempotencyKey is sent with a body on every attempt; empty means a
	// generated one.
	IdempotencyKey string
	// Required names the members a 2xx answer must have, by their exact
	// names, each with a value other than null; with any, the answer must
	// be a JSON object. Nil requires none.
	Required []string
}

// Do sends call and decodes a 2xx answer into out (nil discards it; a
// *json.RawMessage receives the body's bytes as they are). A traceparent
// is sent when ctx carries a trace: its trace id (traceparent.From), else
// its OpenTelemetry span's (see telemetry.Outgoing); a ctx whose trace id
// is malformed is refused, unsent, with traceparent.Check's error.
//
// Errors: a non-2xx answer is a *problem.Details (see [ResponseProblem]);
// a body over the limit wraps [ErrResponseTooLarge]; a 2xx answer that
// does not decode, that lacks a member of call.Required (null, {} and the
// like would otherwise read as a zero result), or, unless out is a
// *json.RawMessage, that repeats a member name or gives a field of out two
// members (jsonbody.CheckAnswer: encoding/json would keep the last, so
// {"verdict":"INVALID", "verdict":"VALID"} would read VALID) wraps
// [ErrMalformedResponse]; a transport failure, after retries, is an error
// wrapping the cause, and a done context gives the context's error.
func (c *Client) Do(ctx context.Context, call Call, out any) error {
	if err := traceparent.Check(ctx); err != nil {
		return fmt.Errorf("%s: %s: %w", c.name, call.Op, err)
	}
	var body []byte
	if call.Body != nil {
		var err error
		if body, err = marshal(call.Body); err != nil {
			return fmt.Errorf("%s: encoding %s request: %w", c.name, call.Op, err)
		}
	}
	var payload any // a nil []byte would still be sent as an empty body
	if body != nil {
		payload = body
	}
	req, err := retryablehttp.NewRequestWithContext(ctx, call.Method, c.base+call.Path, payload)
	if err != nil {
		return fmt.Errorf("%s: building %s request: %w", c.name, call.Op, err)
	}
	h := req.Header
	for k, v := range call.Header {
		h[k] = v
	}
	h.Set("Accept", "application/json, application/problem+json")
	h.Set("User-Agent", c.userAgent)
	if body != nil {
		h.Set("Content-Type", "application/json")
		key := call.IdempotencyKey
		if key == "" {
			key = "idem_" + randomHex(16)
		}
		h.Set(HeaderIdempotencyKey, key)
	}
	telemetry.SetOutgoing(ctx, h) // traceparent and tracestate, the span of ctx as parent when in the trace

	resp, err := c.rc.Do(req)
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
			err = fmt.Errorf("%w (%w)", ctxErr, err)
		}
		return fmt.Errorf("%s: %s %s: %w", c.name, call.Op, call.Path, err)
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(io.LimitReader(resp.Body, c.maxResp+1))
	if err != nil {
		return fmt.Errorf("%s: reading %s response: %w", c.name, call.Op, err)
	}
	if int64(len(data)) > c.maxResp {
		return fmt.Errorf("%s: %s response over %d bytes: %w", c.name, call.Op, c.maxResp, ErrResponseTooLarge)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return ResponseProblem(resp, data)
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(data, out); err != nil {
		return fmt.Errorf("%s: decoding %s response: %w: %w", c.name, call.Op, ErrMalformedResponse, err)
	}
	if _, raw := out.(*json.RawMessage); !raw {
		if err := CheckAnswer(data, out); err != nil {
			return fmt.Errorf("%s: decoding %s response: %w: %v", c.name, call.Op, ErrMalformedResponse, err)
		}
	}
	if err := hasMembers(data, call.Required); err != nil {
		return fmt.Errorf("%s: %s response: %w: %w", c.name, call.Op, ErrMalformedResponse, err)
	}
	return nil
}

// hasMembers reports the first of names that data, a JSON value that
// encoding/json has read, lacks as a member with a value other than null.
// With names, data must be an object.
func hasMembers(data []byte, names []string) error {
	if len(names) == 0 {
		return nil
	}
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(data, &obj); err != nil || obj == nil {
		return fmt.Errorf("the answer %.20q is not a JSON object", data)
	}
	for _, name := range names {
		if v, ok := obj[name]; !ok || string(v) == "null" {
			return fmt.Errorf("the answer has no %q member", name)
		}
	}
	return nil
}

// CheckAnswer checks data, a server's answer that encoding/json decoded
// into out, as [jsonbody.CheckAnswer] does (no member given twice, no
// nesting limit but encoding/json's), and returns an error whose text
// lists the field errors with their paths. The error does not wrap
// jsonbody's *problem.Details: the problem is the answer's, not one the
// server sent, and a server passing the error on must not answer it as
// its own caller's 400.
func CheckAnswer(data []byte, out any) error {
	err := jsonbody.CheckAnswer(data, out)
	var p *problem.Details
	if err == nil || !errors.As(err, &p) || len(p.Errors) == 0 {
		return err
	}
	texts := make([]string, len(p.Errors))
	for i, fe := range p.Errors {
		texts[i] = fe.Field + ": " + fe.Message
	}
	return errors.New(strings.Join(texts, "; "))
}

// MaxPeerText is the most bytes of each text of a server's problem that
// [ResponseProblem] keeps: its title, code, detail and request id, and
// each field error's field and message. A longer one is cut, at a
// character boundary, and ends in "…".
const MaxPeerText = 1024

// ResponseProblem returns the problem of a non-2xx response: its problem
// body, or one made from the status (and the body's first 200 bytes)
// when the body is not a problem. The HTTP status wins over the body's,
// and the X-Request-Id header fills a missing request_id. The server's
// texts are cut to [MaxPeerText] bytes, and its field errors to
// problem.MaxFieldErrors and one counting the others: the problem
// becomes an error's text, which callers log and pass on.
func ResponseProblem(resp *http.Response, body []byte) *problem.Details {
	var p problem.Details
	if err := json.Unmarshal(body, &p); err != nil || p.Status == 0 && p.Title == "" && p.Code == "" {
		detail := clip(strings.TrimSpace(string(body)), 200)
		p = *problem.New(resp.StatusCode, codeForStatus(resp.StatusCode), detail)
	}
	p.Status = resp.StatusCode
	if p.Title == "" {
		p.Title = http.StatusText(resp.StatusCode)
	}
	if p.RequestID == "" {
		p.RequestID = resp.Header.Get(HeaderRequestID)
	}
	p.Title, p.Detail, p.RequestID = clip(p.Title, MaxPeerText), clip(p.Detail, MaxPeerText), clip(p.RequestID, MaxPeerText)
	p.Code = problem.Code(clip(string(p.Code), MaxPeerText))
	if len(p.Errors) > problem.MaxFieldErrors+1 {
		p.Errors = problem.Invalid(p.Errors).Errors
	}
	for i, fe := range p.Errors {
		p.Errors[i].Field, p.Errors[i].Message = clip(fe.Field, MaxPeerText), clip(fe.Message, MaxPeerText)
	}
	return &p
}

// clip returns s cut to at most n bytes at a character boundary, with
// "…" added when it was cut.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "…"
}

// codeForStatus names the usual code of a status, for a response whose
// body is not a problem.
func codeForStatus(status int) problem.Code {
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
// errors and 429, 502, 503, 504, unless ctx is done, the server asks to
// wait longer than the policy allows or ctx's deadline leaves, or the
// server says the call's work ran and failed (ranAndFailed).
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
	if ranAndFailed(resp, c.maxResp) {
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

// ShownURL returns s as an error or a String method may show it: without
// the password of its user info, its query or its fragment, any of which
// may hold a key; "(unparseable)" when it is no URL.
func ShownURL(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparseable)"
	}
	return shownURL(u)
}

// shownURL returns u as [ShownURL] shows it.
func shownURL(u *url.URL) string {
	v := *u
	v.RawQuery, v.ForceQuery, v.Fragment, v.RawFragment = "", false, "", ""
	return v.Redacted()
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
// there is one, goes back to the caller to become a problem; otherwise the
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
