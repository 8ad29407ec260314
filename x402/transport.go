package x402

import (
	"bytes"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"sync"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// Proof is what a [Payer] returns for an offer.
type Proof struct {
	// Payload is the scheme-specific member "payload" of the payment proof,
	// a JSON object.
	Payload json.RawMessage
	// Reference identifies the payment on its network, so that a caller
	// can find out later whether it settled (for "exact" on EVM networks:
	// "<payer address>:<nonce>").
	Reference string
}

// Payer makes payments: it turns an offer into a signed proof. Pay must be
// safe for concurrent use, must not keep offer, and should stop when ctx
// is done. A Payer that also has a method
//
//	Supports(offer PaymentRequirements) bool
//
// is asked first, and the offers it cannot pay are never chosen.
type Payer interface {
	Pay(ctx context.Context, offer PaymentRequirements) (Proof, error)
}

// PayerFunc adapts a function to the Payer interface.
type PayerFunc func(ctx context.Context, offer PaymentRequirements) (Proof, error)

// Pay calls f(ctx, offer).
func (f PayerFunc) Pay(ctx context.Context, offer PaymentRequirements) (Proof, error) {
	return f(ctx, offer)
}

// HeaderIdempotencyKey is the request header that names a logical call
// across retries; see [Transport].
const HeaderIdempotencyKey = "Idempotency-Key"

type paymentKeyCtx struct{}

// WithPaymentKey returns a context whose requests a [Transport] treats as
// one logical call named key: it pays at most once for all of them. The key
// takes precedence over an Idempotency-Key header.
func WithPaymentKey(ctx context.Context, key string) context.Context {
	return context.WithValue(ctx, paymentKeyCtx{}, key)
}

// Transport is an http.RoundTripper that pays for resources behind x402:
// when the server answers 402 with terms (either protocol version), it
// chooses an offer, has the Payer sign a proof, and sends the request once
// more with the proof in PAYMENT-SIGNATURE (version 2) or X-PAYMENT
// (version 1). The paid answer is returned as is; [SettlementFromResponse]
// reads its settlement.
//
// Transport bends the RoundTripper contract where paying requires it: it
// sends a second request, and it returns errors for answers it received
// but would not act on. Declining to pay returns an error wrapping
// ErrNoAcceptableOffer or ErrBudgetExceeded; a 402 answer to a paid request
// returns a *PaymentError wrapping ErrPaymentRejected, not a second
// payment, or, when its settlement reports an "auth-capture" hold still
// standing (a capture the facilitator did not answer, which may still
// happen), wrapping ErrPaymentPending: the call sent again with the same
// proof gets the answer once it is captured. A failure after the proof
// was sent, cancellation included, returns a *PaymentError with the
// payment's id and reference, because the caller cannot know whether the
// payment settled. Callers of
// http.Client.Do find all of them with errors.Is and errors.As through the
// *url.Error.
//
// It never mutates the caller's request: it sends clones. A request body is
// sent again through GetBody, or buffered in memory before the first send
// when GetBody is nil. A request that already carries a PAYMENT-SIGNATURE
// or X-PAYMENT header is sent unchanged and never paid for: its 402 answer
// is returned to the caller.
//
// It pays only the origin (scheme and host) the caller asked. When an
// http.Client follows a redirect to another origin and that origin answers
// 402, the Transport does not pay it: the request fails with an error
// wrapping [ErrRedirectedPayment]. A redirect on the same origin is paid
// as any request, once: when a request before it in the chain carried a
// proof, its 402 is not paid again, and the request fails with an error
// wrapping ErrRedirectedPayment. (The redirected request is recognized by
// its Response, which net/http sets; a request the caller makes anew is
// its own origin.)
//
// # One payment per logical call
//
// A retry above the Transport, such as a go-retryablehttp Client whose
// HTTPClient uses it, sends the same request again after a 5xx or a lost
// connection. When the request names its logical call, through
// [WithPaymentKey] or an Idempotency-Key header, the Transport remembers the
// proof it made for that call and attaches the same proof to the repeated
// request instead of paying again; the server settles a proof at most
// once. A kept proof is bound to the method, scheme, host and path it paid
// for as well as the key: a request with the same key to another resource
// is paid on its own and never carries it. Concurrent requests of one call
// share one payment (single flight per call): one of them pays, the others
// wait for its proof and send it too, so that at most one of them is
// served and the rest get a *PaymentError. A failure to pay is returned to
// all of them, except when the paying request's context ended before the
// proof existed: a waiting request then pays itself. A waiting request
// returns as soon as its own context ends, and the payment in progress
// goes on for the others. A request that names no call is paid for on its
// own. The outer retry policy should stop on errors for which [Permanent]
// reports true.
//
// Across a disconnect, a proof that was sent may have settled: the
// Transport keeps it as long as a server can still take it, until its
// authorization expires (an EIP-3009 authorization's validBefore, else
// the offer's maxTimeoutSeconds after it was signed) or, for an
// "auth-capture" proof, until the offer's capture deadline when that is
// later (at most DefaultMaxValidity after it was signed), since the
// server keeps the answer of a capture left pending until then, so that
// the retry of the call, with the same key, carries it again and the
// server can deliver the answer it bought (see [Middleware]) instead of
// taking a second payment. A retry after that carries a new proof: a server that
// kept the answer, as [Middleware] over a vouch server does for its
// idempotency window (24 hours by default, longer than any proof the
// Policy lets the Transport sign), answers it from its store and never
// settles that payment (header Idempotent-Replayed: true, no
// PAYMENT-RESPONSE).
//
// The Budget is charged when a proof is made and refunded only when the
// proof never left the process: when every request that held it, the one
// that made it and those that waited for it, gave up before sending it. A
// proof that any request sent is spent, and kept for the call's retries,
// whichever request made it. A Transport is safe for concurrent use and
// must not be copied after first use.
type Transport struct {
	// Base sends the requests; nil means http.DefaultTransport.
	Base http.RoundTripper
	// Payer signs payments; nil means the Transport never pays and
	// returns 402 answers to the caller.
	Payer Payer
	// Policy limits what is paid. Its zero value allows "exact" payments in
	// USDC on test networks, of up to DefaultMaxAmount per call, for
	// authorizations of at most DefaultMaxTimeoutSeconds (see [Policy]).
	Policy Policy
	// Budget, shared by any number of Transports, limits the total paid;
	// nil means no total limit.
	Budget *Budget
	// Select chooses the offer to pay, or declines; nil means DefaultSelect.
	Select SelectFunc
	// Now returns the current time, used to forget old proofs; nil means
	// time.Now.
	Now func() time.Time
	// Logger records payments; nil is silent.
	Logger *slog.Logger
	// TracerProvider and MeterProvider receive the span "x402.pay" of
	// each paid or declined request and its count in
	// vouch.x402.client.payments; nil means the global provider (see
	// docs/OBSERVABILITY.md).
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider

	telOnce sync.Once
	tel     *payerTelemetry
	mu      sync.Mutex
	paid    map[string]*memo // by payment key
}

// RoundTrip sends req, paying if the answer is 402 and the Policy allows.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	base := t.Base
	if base == nil {
		base = http.DefaultTransport
	}
	if t.Payer == nil || req.Header.Get(HeaderPaymentSignature) != "" || req.Header.Get(HeaderXPayment) != "" {
		return base.RoundTrip(req)
	}
	body, err := newBodies(req)
	if err != nil {
		return nil, err
	}
	key := paymentKey(req)
	if m := t.recall(key); m != nil {
		ctx, pt := t.telemetry().start(req.Context())
		pt.paying(m, true)
		resp, err := t.sendPaid(ctx, base, req, body, m)
		pt.end(ctx, resp, err)
		return resp, err
	}
	first, err := clone(req, body)
	if err != nil {
		return nil, err
	}
	resp, err := roundTrip(base, first)
	if err != nil || resp.StatusCode != http.StatusPaymentRequired {
		return resp, err
	}
	terms, err := ReadPaymentRequired(resp)
	if errors.Is(err, errNoTerms) {
		return resp, nil // a 402 that is not x402: the caller's to read
	}
	resp.Body.Close()
	ctx, pt := t.telemetry().start(req.Context())
	resp, err = t.payAndSend(ctx, pt, base, req, body, key, terms, err)
	pt.end(ctx, resp, err)
	return resp, err
}

// payAndSend pays for req on terms (or declines) and sends it with the
// proof; termsErr is the error of reading the terms.
func (t *Transport) payAndSend(ctx context.Context, pt *payTrace, base http.RoundTripper, req *http.Request, body *bodies, key string, terms *PaymentRequired, termsErr error) (*http.Response, error) {
	if termsErr != nil {
		return nil, termsErr
	}
	if from := chainOrigin(req); !sameOrigin(from, req.URL) {
		return nil, fmt.Errorf("%w: %s://%s, reached from %s://%s, answered 402; not paid",
			ErrRedirectedPayment, req.URL.Scheme, req.URL.Host, from.Scheme, from.Host)
	}
	if chainPaid(req) {
		return nil, fmt.Errorf("%w: %s, reached by a redirect from a paid request, answered 402; not paid again",
			ErrRedirectedPayment, loggedURL(req.URL))
	}
	m, made, err := t.payOnce(ctx, req, key, terms)
	if err != nil {
		return nil, err
	}
	pt.paying(m, !made)
	return t.sendPaid(ctx, base, req, body, m)
}

// pay chooses an offer, charges the budget and has the Payer sign the
// proof of m.
func (t *Transport) pay(ctx context.Context, req *http.Request, m *memo, terms *PaymentRequired) error {
	offers := terms.Accepts
	if s, ok := t.Payer.(interface {
		Supports(PaymentRequirements) bool
	}); ok {
		offers = nil
		for _, o := range terms.Accepts {
			if s.Supports(o) {
				offers = append(offers, o)
			}
		}
		if len(offers) == 0 && len(terms.Accepts) > 0 {
			return unpayable(&t.Policy, terms.Accepts)
		}
	}
	sel := t.Select
	if sel == nil {
		sel = DefaultSelect
	}
	offer, err := sel(req, &t.Policy, offers)
	if err != nil {
		return err
	}
	if err := t.Policy.Allows(offer); err != nil {
		return fmt.Errorf("%w: %w", ErrNoAcceptableOffer, err)
	}
	amount, _ := ParseAmount(offer.Amount) // Allows parsed it
	if err := t.Budget.Spend(amount); err != nil {
		return err
	}
	id := paymentID(m.key)
	// An offer that names no validity leaves it to the payer, whose
	// default may be longer than the Policy allows: the payer is given
	// the Policy's limit, the server its own offer.
	signed := offer
	if signed.MaxTimeoutSeconds <= 0 {
		signed.MaxTimeoutSeconds = t.Policy.maxTimeout()
	}
	proof, err := payGuarded(ctx, t.Payer, signed)
	if err != nil {
		t.Budget.Refund(amount)
		return fmt.Errorf("x402: paying %s %s on %s: %w", offer.Amount, offer.Asset, offer.Network, err)
	}
	p := PaymentPayload{X402Version: terms.X402Version, Resource: terms.Resource, Accepted: offer, Payload: proof.Payload, Extensions: echoExtensions(terms.Extensions, id)}
	header := HeaderPaymentSignature
	if terms.X402Version == Version1 {
		header = HeaderXPayment
	}
	value, err := EncodeHeader(p)
	if err != nil {
		t.Budget.Refund(amount)
		return err
	}
	m.header, m.value, m.amount = header, value, amount
	m.err = PaymentError{ID: id, Reference: proof.Reference, Offer: offer, X402Version: terms.X402Version}
	m.expires = proofExpiry(&p, signed, t.now())
	if t.Logger != nil && t.Logger.Enabled(ctx, slog.LevelInfo) {
		t.Logger.LogAttrs(ctx, slog.LevelInfo, "x402: paid",
			slog.String("id", id), slog.String("reference", proof.Reference), slog.String("amount", offer.Amount),
			slog.String("asset", offer.Asset), slog.String("network", offer.Network), slog.String("url", loggedURL(req.URL)))
	}
	return nil
}

// sendPaid sends req with the proof of m, in ctx: req's context, or the
// payment's span's.
func (t *Transport) sendPaid(ctx context.Context, base http.RoundTripper, req *http.Request, body *bodies, m *memo) (*http.Response, error) {
	c, err := cloneIn(ctx, req, body)
	if err == nil {
		err = req.Context().Err()
	}
	t.send(m, err)
	if err != nil {
		return nil, err
	}
	c.Header.Set(m.header, m.value)
	resp, err := roundTrip(base, c)
	if err != nil {
		return nil, m.failure(err)
	}
	if resp.StatusCode != http.StatusPaymentRequired {
		return resp, nil
	}
	defer resp.Body.Close()
	pe := m.failure(ErrPaymentRejected)
	if terms, err := ReadPaymentRequired(resp); err == nil {
		pe.Reason = terms.Error
	}
	if s, err := settlementFromHeader(resp.Header); err == nil {
		pe.Settlement = s
		if s.ErrorReason != "" {
			pe.Reason = s.ErrorReason
		}
		if holdStands(s) {
			// Not refused: the answer is kept for the same proof.
			pe.Err = ErrPaymentPending
		}
	}
	return nil, pe
}

// failure returns a new PaymentError for m with the cause err.
func (m *memo) failure(err error) *PaymentError {
	pe := m.err
	pe.Err = err
	return &pe
}

func (t *Transport) now() time.Time {
	if t.Now != nil {
		return t.Now()
	}
	return time.Now()
}

// loggedURL returns u as the log shows it: without its user info, query
// or fragment, any of which may hold a key.
func loggedURL(u *url.URL) string {
	v := *u
	v.User = nil
	v.RawQuery, v.ForceQuery, v.Fragment, v.RawFragment = "", false, "", ""
	return v.String()
}

// paymentKey names the logical call of req, or returns "": its key from
// WithPaymentKey or the Idempotency-Key header, bound to the method, host
// and path, so that a proof made for one resource is never sent to
// another.
func paymentKey(req *http.Request) string {
	k, ok := req.Context().Value(paymentKeyCtx{}).(string)
	if !ok || k == "" {
		k = req.Header.Get(HeaderIdempotencyKey)
	}
	if k == "" {
		return ""
	}
	var b []byte
	for _, s := range []string{req.Method, req.URL.Scheme, req.URL.Host, req.URL.Path, k} {
		b = strconv.AppendInt(b, int64(len(s)), 10)
		b = append(append(b, ':'), s...)
	}
	return string(b)
}

// paymentID returns the payment id of a call: derived from its key, so that
// it is the same in every process that retries the call, or random.
func paymentID(key string) string {
	var b [16]byte
	if key != "" {
		sum := sha256.Sum256([]byte(key))
		copy(b[:], sum[:])
	} else {
		rand.Read(b[:])
	}
	return "pay_" + hex.EncodeToString(b[:])
}

// extPaymentIdentifier is the extension through which a payer gives the
// server an idempotency id of its own.
const extPaymentIdentifier = "payment-identifier"

// echoExtensions copies the extensions of the terms into the payload, and
// adds the payment id to the payment-identifier extension if the server
// offers it.
func echoExtensions(ext map[string]json.RawMessage, id string) map[string]json.RawMessage {
	if len(ext) == 0 {
		return nil
	}
	out := make(map[string]json.RawMessage, len(ext))
	for k, v := range ext {
		out[k] = v
	}
	var pi map[string]json.RawMessage
	if json.Unmarshal(ext[extPaymentIdentifier], &pi) != nil || pi == nil {
		return out
	}
	var info map[string]any
	if json.Unmarshal(pi["info"], &info) != nil || info == nil {
		info = map[string]any{}
	}
	info["id"] = id
	if b, err := json.Marshal(info); err == nil {
		pi["info"] = b
		if b, err := json.Marshal(pi); err == nil {
			out[extPaymentIdentifier] = b
		}
	}
	return out
}

// bodies hands out the request body: the original for the first send, then
// fresh copies from GetBody or from a buffer.
type bodies struct {
	req     *http.Request
	buf     []byte // non-nil when the body was buffered
	handed  bool
	noBody  bool
	getBody func() (io.ReadCloser, error)
}

func newBodies(req *http.Request) (*bodies, error) {
	b := &bodies{req: req, getBody: req.GetBody}
	switch {
	case req.Body == nil || req.Body == http.NoBody:
		b.noBody = true
	case req.GetBody == nil:
		data, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("x402: buffering the request body: %w", err)
		}
		b.buf = data
		b.getBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(data)), nil }
	}
	return b, nil
}

func (b *bodies) next() (io.ReadCloser, error) {
	if b.noBody {
		return b.req.Body, nil
	}
	if !b.handed && b.buf == nil {
		b.handed = true
		return b.req.Body, nil
	}
	b.handed = true
	rc, err := b.getBody()
	if err != nil {
		return nil, fmt.Errorf("x402: rewinding the request body: %w", err)
	}
	return rc, nil
}

// clone returns a copy of req for sending, with the next body.
func clone(req *http.Request, b *bodies) (*http.Request, error) {
	return cloneIn(req.Context(), req, b)
}

// cloneIn is clone with the copy's context ctx.
func cloneIn(ctx context.Context, req *http.Request, b *bodies) (*http.Request, error) {
	body, err := b.next()
	if err != nil {
		return nil, err
	}
	c := req.Clone(ctx)
	c.Body = body
	if b.getBody != nil {
		c.GetBody = b.getBody
	}
	return c, nil
}
