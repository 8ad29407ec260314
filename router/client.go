package router

import (
	"context"
	"crypto/rand"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/vouchkit/vouch/internal/httpapi"
)

// Client is a [Service] that calls a remote router over HTTP: each method
// POSTs its request as JSON to the operation's route and decodes the
// answer. Build it with [NewClient]; it is safe for concurrent use.
//
// Errors: a non-2xx answer is an *[Error] (errors.As reaches it) holding
// the server's problem body, or, when the body is not a problem, one made
// from the status; its RequestID is the server's request id. A body over
// the limit wraps [ErrResponseTooLarge]. A 2xx answer that does not
// decode, that lacks a member its operation always has (null or {} rather
// than a verdict, say; docs/INTERFACE.md lists them, and those it lets go
// absent or null are not required), that gives a member twice
// (encoding/json would read {"verdict":"INVALID","verdict":"VALID"} as
// VALID) or one field under two names of different case, is an error
// wrapping [ErrMalformedResponse] that names the member; its nesting is
// not limited, since an answer echoes workers' outputs. So is a
// validation's (versions 1 to 3) or fact check's answer, or a version 3
// delegation's, that breaks the contract: a verdict or a replica's label
// its operation does not give (a validation of version 1, or of version
// 2 on one session, always gives a verdict, that of its one run), a
// confidence, agreement or reliability outside [0, 1], a
// negative weight, a replica out of range or given twice, a consensus
// block that counts other replicas than the call asked for or lists
// another number of verdicts, a run whose label is not its replica's
// verdict in that block. The evidence a problem of those operations, or
// of a version 1 or 2 delegation, carries in extra (a 409
// disagreement's, or the 502 of a version 2 validation with
// policy.redundancy 3 or 5, say: {"runs":[...],"consensus":{...}}; the
// one run of a version 1 or 2 call on one session) is held to the
// same contract, since a trust service counts a version 3 problem's runs
// as votes and a caller reads any as the record of the replicas: evidence
// that breaks it, or that does not decode, makes the call's error one
// wrapping ErrMalformedResponse, not the *Error. A transport failure,
// after retries, is an error wrapping the cause, and a done context gives
// the context's error. A verdict of INVALID or RETRY is a result, never
// an error.
//
// Retries: a call is retried, with exponential backoff and jitter between
// the policy's bounds, after a connection error, a 429, 502, 503 or 504,
// honouring Retry-After; never after another status, nor after the
// router's own 502 all_replicas_failed or 504 timeout, whose replicas
// ran (a retry would run them again: a 5xx answer is not kept for
// replay). Every attempt of one call carries the same Idempotency-Key
// (generated, or set with [WithIdempotencyKey]), so a [Handler] runs the
// call at most once; so does every attempt of an x402 Ping, which has no
// body, so that the x402.Transport pays for its attempts once. Waits end
// when ctx does.
//
// Deadlines: a call whose ctx has a deadline sends, in the request's
// policy.timeout_ms (versions 2 and 3, and the version 1 fact check;
// versions 1 delegate and validate have none), the time left less a
// reserve for the round trip, a tenth of it and at most 250ms, and at
// most an hour, the wire's bound; a shorter timeout_ms the request set
// is kept. The server then cuts its runs short in time to answer from
// the votes in (a 504 timeout only when none is in), as [Engine] does
// in process, rather than the caller giving up with nothing. A worker
// that ignores its context may still hold the answer up to the
// server's stop grace past it. A deadline that leaves less than the
// wire's least timeout, 1 ms, fails the call at once with
// context.DeadlineExceeded: no answer could come in time. The
// caller's request is never modified. A call with the caller's own
// Idempotency-Key ([WithIdempotencyKey]) is sent as the request is:
// its repeat under another deadline would be another body, which the
// server refuses (422) instead of giving the first answer.
//
// Redirects: one on the router's origin is followed; one to another
// scheme or host fails the call, unretried, since an x402 Client would
// pay that host and read its answer as the router's.
type Client struct {
	cfg       httpapi.ClientConfig
	apiKey    string
	variant   Variant
	stringIDs bool
	core      *httpapi.Client
}

var (
	_ Service        = (*Client)(nil)
	_ StatusReporter = (*Client)(nil)
)

// RetryPolicy bounds the retries of a [Client]: Max (int) is the number
// of retries after the first attempt, zero meaning none; WaitMin and
// WaitMax (time.Duration) bound the backoff between attempts (the n-th
// retry waits about WaitMin·2ⁿ, at most WaitMax); RetryAfterMax is the
// longest Retry-After the Client waits for (a longer one, or one past
// ctx's deadline, ends the retries and the 429 or 503 is returned). Zero
// durations mean the default's values.
//
// The type is an alias of the project's internal one, so that trust's
// Client takes the same value.
type RetryPolicy = httpapi.RetryPolicy

// DefaultRetryPolicy returns the policy of a Client built without
// [WithRetry]: 3 retries, waits from 250ms to 5s, Retry-After up to 30s.
func DefaultRetryPolicy() RetryPolicy { return httpapi.DefaultRetryPolicy() }

// DefaultMaxResponseBytes is the largest response body a [Client] or an
// [HTTPWorker] reads unless told otherwise.
const DefaultMaxResponseBytes = httpapi.DefaultMaxResponseBytes

// String returns "router.Client(<base URL>, <variant>)", the base URL without
// the password of its user info; it never shows the API key.
func (c *Client) String() string {
	return "router.Client(" + httpapi.ShownURL(c.cfg.BaseURL) + ", " + string(c.variant) + ")"
}

// GoString is String, so that %#v does not print the key either.
func (c *Client) GoString() string { return c.String() }

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
func WithHTTPClient(hc *http.Client) ClientOption { return func(c *Client) { c.cfg.HTTPClient = hc } }

// WithClientLogger sets the logger of attempts and retries (Debug) and
// failures (Error); nil means silent.
func WithClientLogger(l *slog.Logger) ClientOption { return func(c *Client) { c.cfg.Logger = l } }

// WithUserAgent sets the User-Agent header; the default is "vouch-router".
func WithUserAgent(ua string) ClientOption { return func(c *Client) { c.cfg.UserAgent = ua } }

// WithRetry sets the retry policy; the default is [DefaultRetryPolicy].
func WithRetry(p RetryPolicy) ClientOption { return func(c *Client) { c.cfg.Retry = p } }

// WithMaxResponseBytes sets the largest response body read; zero means
// DefaultMaxResponseBytes. A larger one fails the call with
// [ErrResponseTooLarge].
func WithMaxResponseBytes(n int64) ClientOption {
	return func(c *Client) { c.cfg.MaxResponseBytes = n }
}

// WithSessionIDsAsStrings makes the Client send the session ids of its
// requests (session_id, session_pool and consensus.session_pool) as JSON
// strings of digits ("201"), as the public router's documentation writes
// them, instead of JSON integers. A [Handler] takes both.
// Ids elsewhere in a request, such as inside context or metadata, are the
// caller's and are sent as they are.
func WithSessionIDsAsStrings() ClientOption { return func(c *Client) { c.stringIDs = true } }

// NewClient returns a Client for the router at baseURL (an absolute http
// or https URL; route paths such as /api/v2/validate are appended to it).
// It fails on a bad URL, an unknown variant or a negative bound.
func NewClient(baseURL string, opts ...ClientOption) (*Client, error) {
	c := &Client{
		cfg:     httpapi.ClientConfig{Name: "router", BaseURL: baseURL, UserAgent: "vouch-router", Retry: DefaultRetryPolicy()},
		variant: VariantNormal,
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
	core, err := httpapi.NewClient(c.cfg)
	if err != nil {
		return nil, fmt.Errorf("router: NewClient: %w", err)
	}
	c.core = core
	return c, nil
}

// DelegateV1 implements [Service].
func (c *Client) DelegateV1(ctx context.Context, req *DelegateV1Request) (*DelegateV1Response, error) {
	return roundTrip[DelegateV1Response](ctx, c, OpDelegateV1, req, nil)
}

// ValidateV1 implements [Service].
func (c *Client) ValidateV1(ctx context.Context, req *ValidateV1Request) (*ValidateV1Response, error) {
	return roundTrip[ValidateV1Response](ctx, c, OpValidateV1, req, nil)
}

// FactcheckV1 implements [Service].
func (c *Client) FactcheckV1(ctx context.Context, req *FactcheckV1Request) (*FactcheckResponse, error) {
	return roundTrip[FactcheckResponse](ctx, c, OpFactcheckV1, req,
		func(r *FactcheckV1Request) *int64 { return &r.Policy.TimeoutMS })
}

// DelegateV2 implements [Service].
func (c *Client) DelegateV2(ctx context.Context, req *DelegateV2Request) (*DelegateV2Response, error) {
	return roundTrip[DelegateV2Response](ctx, c, OpDelegateV2, req,
		func(r *DelegateV2Request) *int64 { return &r.Policy.TimeoutMS })
}

// ValidateV2 implements [Service].
func (c *Client) ValidateV2(ctx context.Context, req *ValidateV2Request) (*ValidateV2Response, error) {
	return roundTrip[ValidateV2Response](ctx, c, OpValidateV2, req,
		func(r *ValidateV2Request) *int64 { return &r.Policy.TimeoutMS })
}

// DelegateV3 implements [Service].
func (c *Client) DelegateV3(ctx context.Context, req *DelegateV3Request) (*DelegateV3Response, error) {
	return roundTrip[DelegateV3Response](ctx, c, OpDelegateV3, req,
		func(r *DelegateV3Request) *int64 { return &r.Policy.TimeoutMS })
}

// ValidateV3 implements [Service].
func (c *Client) ValidateV3(ctx context.Context, req *ValidateV3Request) (*ValidateV3Response, error) {
	return roundTrip[ValidateV3Response](ctx, c, OpValidateV3, req,
		func(r *ValidateV3Request) *int64 { return &r.Policy.TimeoutMS })
}

// Factcheck implements [Service].
func (c *Client) Factcheck(ctx context.Context, req *FactcheckRequest) (*FactcheckResponse, error) {
	return roundTrip[FactcheckResponse](ctx, c, OpFactcheck, req,
		func(r *FactcheckRequest) *int64 { return &r.Policy.TimeoutMS })
}

// roundTrip sends req to op's route and decodes the answer into a Resp.
// timeoutMS, nil when the request has none, points at the request's
// policy.timeout_ms, which ctx's deadline bounds (see withDeadline).
func roundTrip[Resp, Req any](ctx context.Context, c *Client, op Operation, req *Req, timeoutMS func(*Req) *int64) (*Resp, error) {
	if req == nil {
		return nil, fmt.Errorf("router: %s: the request is nil", op)
	}
	req, err := withDeadline(ctx, req, timeoutMS)
	if err != nil {
		return nil, fmt.Errorf("router: %s: %w", op, err)
	}
	replicas := askedReplicas(req)
	var resp Resp
	if err := c.do(ctx, op, c.variantOf(ctx), req, &resp); err != nil {
		return nil, checkProblem(op, replicas, err)
	}
	if a, ok := any(&resp).(answerCheck); ok {
		if err := a.check(replicas); err != nil {
			return nil, fmt.Errorf("router: %s response: %w: %v", op, ErrMalformedResponse, err)
		}
	}
	return &resp, nil
}

// Ping calls GET /api/v1/x402/ping when the call's variant (see
// [WithVariant]) is x402, paying through the Client's transport, and GET
// /api/v1/ping otherwise (the public router has no trial ping). It
// returns nil when the server answers {"message":"pong"}, an error
// wrapping [ErrMalformedResponse] for another answer, and the errors of
// any call.
func (c *Client) Ping(ctx context.Context) error {
	v := c.variantOf(ctx)
	if v != VariantX402 {
		v = VariantNormal
	}
	var p pong
	if err := c.do(ctx, OpPing, v, nil, &p); err != nil {
		return err
	}
	if p.Message != "pong" {
		return fmt.Errorf("router: ping: answer %q, want \"pong\": %w", p.Message, ErrMalformedResponse)
	}
	return nil
}

// About calls GET /api/v1/about, which takes no credential.
func (c *Client) About(ctx context.Context) (*About, error) {
	var a About
	if err := c.do(ctx, OpAbout, VariantNormal, nil, &a); err != nil {
		return nil, err
	}
	return &a, nil
}

// Status implements [StatusReporter]: it calls GET /api/v1/status with
// the Client's API key ([WithAPIKey]), whatever the Client's variant.
func (c *Client) Status(ctx context.Context) (*Status, error) {
	var st Status
	if err := c.do(ctx, OpStatus, VariantNormal, nil, &st); err != nil {
		return nil, err
	}
	return &st, nil
}

// variantOf returns the variant of a call: the context's, or the Client's.
func (c *Client) variantOf(ctx context.Context) Variant {
	if v := VariantFrom(ctx); v != "" {
		return v
	}
	return c.variant
}

// answerMembers names the members the answer to op must have, each with
// a value other than null (docs/INTERFACE.md, sections 5 to 7): members
// a Handler always writes and that make the answer, so that an answer
// such as null or {} is not read as a zero result. Members the interface
// lets go absent or null are not among them: request_id, usage, a
// delegation's result (null without a winner), reasons (null when
// empty), status's sessions; nor does a feedback's answer, which the
// Client does not read.
func answerMembers(op Operation) []string {
	switch op {
	case OpDelegateV1:
		return []string{"session_id", "task_id", "task_result_output"}
	case OpValidateV1:
		return []string{"session_id", "task_id", "verdict", "confidence"}
	case OpDelegateV2:
		return []string{"session_id", "task_id", "evidence"}
	case OpValidateV2:
		return []string{"verdict", "confidence", "evidence"}
	case OpDelegateV3:
		return []string{"task_id", "evidence", "consensus"}
	case OpValidateV3, OpFactcheck, OpFactcheckV1:
		return []string{"verdict", "confidence", "evidence", "consensus"}
	case OpPing:
		return []string{"message"}
	case OpAbout:
		return []string{"service", "version", "variants"}
	case OpStatus:
		return []string{"calls"}
	}
	return nil
}

// do sends in (nil for none) to the route of op in variant v and decodes
// the answer into out. The API key goes with every variant but x402.
func (c *Client) do(ctx context.Context, op Operation, v Variant, in, out any) error {
	if err := checkTraceID(ctx); err != nil {
		return err
	}
	rt, ok := lookup(op, v)
	if !ok {
		return fmt.Errorf("router: %s in variant %q: %w", op, v, ErrNoVariant)
	}
	if in != nil && c.stringIDs {
		body, err := quoteSessionIDs(in)
		if err != nil {
			return fmt.Errorf("router: encoding %s request: %w", op, err)
		}
		in = body
	}
	call := httpapi.Call{Op: string(op), Method: rt.Method, Path: rt.Path, Body: in,
		IdempotencyKey: idempotencyKeyFrom(ctx), Required: answerMembers(op)}
	if c.apiKey != "" && v != VariantX402 {
		call.Header = http.Header{"Authorization": {"Bearer " + c.apiKey}}
	}
	if v == VariantX402 && in == nil {
		// A paid call without a body gets no generated key, yet its
		// attempts are one payment: the key names the call for the
		// x402.Transport, which sends a retry the proof it made.
		key := call.IdempotencyKey
		if key == "" {
			key = "idem_" + rand.Text()
		}
		call.Header = http.Header{httpapi.HeaderIdempotencyKey: {key}}
	}
	return c.core.Do(ctx, call, out)
}
