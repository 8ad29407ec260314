package x402

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"

	"github.com/vouchkit/vouch/internal/problem"
)

// Price is what a paid route costs.
type Price struct {
	// Accepts lists the offers a payer may choose from, in order of
	// preference. Networks may be named either way; each answer uses the
	// naming of its protocol version.
	Accepts []PaymentRequirements
	// Description tells a person what the payment buys.
	Description string
	// MimeType is the media type of the paid response.
	MimeType string
	// TimeBudget is the longest the route's handler may run; zero means
	// DefaultTimeBudget. The handler runs under a context with this
	// deadline, and an EIP-3009 authorization is refused unless it stays
	// valid for the time budget plus the settlement's time
	// ([MiddlewareConfig.SettleTimeout]): otherwise the work could be done
	// and the authorization expire before it is settled. TimeBudget plus
	// SettleTimeout must not exceed any offer's MaxTimeoutSeconds, the
	// validity a payer gives its authorization.
	TimeBudget time.Duration
	// SettleBefore settles the payment before the handler runs, instead of
	// after it succeeded. The payer then pays even when the handler fails;
	// in exchange, no work is done for an authorization that then fails to
	// settle. Choose it for routes whose work is expensive; the default,
	// settling after, never charges for a failed answer but may do the
	// work of a payment that does not settle (a payer that emptied its
	// balance meanwhile).
	SettleBefore bool
	// Gate, if not nil, delivers and settles only the answers its Check
	// passes ([DeliveryGate]). It cannot be combined with SettleBefore.
	Gate *DeliveryGate
	// Discovery, if not nil, describes the route to x402 discovery
	// services in its 402 answers (see [Discovery]).
	Discovery *Discovery
}

// DefaultTimeBudget is the time budget of a route whose Price leaves
// TimeBudget zero.
const DefaultTimeBudget = 30 * time.Second

// DefaultSettleTimeout bounds a settlement when MiddlewareConfig leaves
// SettleTimeout zero.
const DefaultSettleTimeout = 15 * time.Second

// MiddlewareConfig configures [Middleware].
type MiddlewareConfig struct {
	// Facilitator verifies and settles payments. Required.
	Facilitator Facilitator
	// Routes prices requests by http.ServeMux pattern, such as
	// "POST /api/v2/x402/validate". Requests that match no pattern are
	// free and pass through.
	Routes map[string]Price
	// PriceFunc, if not nil, prices requests instead of Routes: it reports
	// false for a free request. Its prices are checked as those of Routes
	// are, on each request; one that fails the check is answered 503.
	PriceFunc func(r *http.Request) (Price, bool)
	// Replay remembers accepted payments; nil means a new MemoryReplay.
	Replay ReplayStore
	// Outcomes keeps the outcomes of gated routes ([DeliveryGate]); nil
	// means a new MemoryOutcomes.
	Outcomes OutcomeStore
	// SettleTimeout bounds the facilitator's Settle call; zero means
	// DefaultSettleTimeout. Settlement runs on a context detached from the
	// client's, so that a client that disconnects cannot cancel it.
	SettleTimeout time.Duration
	// Now returns the current time; nil means time.Now.
	Now func() time.Time
	// Logger records verifications and settlements; nil is silent.
	Logger *slog.Logger
	// TracerProvider and MeterProvider receive the spans of verify and
	// settle and the payment metrics (docs/OBSERVABILITY.md); nil means
	// the global providers.
	TracerProvider trace.TracerProvider
	MeterProvider  metric.MeterProvider
}

// exposed are the response headers a browser client must be allowed to
// read.
const exposed = HeaderPaymentRequired + ", " + HeaderPaymentResponse + ", " + HeaderXPaymentResponse

// Middleware returns a middleware that makes the priced requests pay.
//
// A priced request without a proof gets 402 with the terms in both
// versions: base64 JSON in the PAYMENT-REQUIRED header (version 2) and the
// version 1 terms as the JSON body. Every 402 answer carries
// Cache-Control: no-store, the route's description and media type in its
// resource, and the route's [Discovery], if any: extensions.bazaar in
// version 2, outputSchema in each version 1 offer. A proof is read from
// PAYMENT-SIGNATURE or X-PAYMENT; a header that does not decode gets a 400
// problem. The proof must match one of the route's offers (a version 1
// proof that several offers could take, such as offers that differ only in
// asset, pays the first the Facilitator verifies it against), must not have
// been accepted before (see [ReplayStore]), must, for an EIP-3009
// authorization, stay valid until the route's time budget and the
// settlement have passed (reason "authorization_validity_too_short"), and
// must pass the Facilitator's Verify; otherwise the answer is 402 with the
// terms and the reason. The handler then runs, under a context whose
// deadline is the route's time budget.
//
// By default (settle after) the handler runs into a buffer, and its
// answer is held back until the payment is settled: an answer with status
// 400 or more is sent without settling (and the proof may be sent again),
// and so is an answer the handler delivered from its idempotency store
// (header Idempotent-Replayed: true; see "Answers from the store" below);
// any other is settled and sent with the settlement in PAYMENT-RESPONSE,
// and also in X-PAYMENT-RESPONSE for a version 1 proof. A failed
// settlement answers 402 with the settlement (success false) in those
// headers, and the handler's answer is dropped. Streaming (http.Flusher)
// is not available to these handlers. A route whose Price has
// SettleBefore settles first, answers 402 without running the handler
// when that fails, and otherwise runs the handler directly on the
// response with the settlement headers already set: the payer pays even
// when the handler then fails.
//
// # Disconnects, retries and concurrency
//
// Settlement runs on a context detached from the client's, bounded by
// SettleTimeout, so a client that disconnects cannot cancel a settlement
// the facilitator may complete anyway; the settlement is recorded with
// the proof (MarkSettled) before the answer is written, whatever the
// client does. A proof is accepted once: of concurrent requests with one
// proof, exactly one proceeds (Reserve is atomic), the others get 402
// "already used". A repeat of it is answered 402 "already used", except
// in one case, so that an answer paid for and lost on the way (a dropped
// connection, a 502 from a proxy) can still be had: when the wrapped
// handler is a [Replayer], the proof's first use was settled, and the
// repeat carries the same proof, method, path and Idempotency-Key as that
// first use, the middleware asks the handler's ServeReplay for the kept
// answer and sends it with the first settlement in the payment headers,
// without settling again and without running the handler. A repeat that
// arrives while the first use settles in the same process waits for the
// settlement. When ServeReplay has no answer (another caller, another
// body, nothing kept), or the first use has not settled (it still runs,
// settles on another server, or failed to settle), the repeat is answered
// 402 as any other. A settlement whose outcome is unknown (the
// facilitator call failed or timed out) keeps the proof used, and its
// repeat is 402: the payer must ask its network whether it settled.
//
// # Answers from the store
//
// An answer bought once is never charged again. A retry that carries a
// new payment (its payer's Transport no longer had the first proof) and
// that the handler answers from its idempotency store, without doing the
// work, is verified only: the payment must verify, which names the payer
// whose stored answer it gets, but it is never settled, its proof is
// released unspent, and the answer carries no PAYMENT-RESPONSE. On a
// route that settles before the work, a handler that is a [Replayer] is
// asked for its stored answer (ServeReplay) before the payment is settled,
// and so it is for an authorization too short for the route's work: an
// answer from the store needs no settlement.
//
// The handler finds the verified payment with [PaymentFromContext]. Every
// answer on a priced route exposes the payment headers to browsers through
// Access-Control-Expose-Headers.
//
// Middleware returns an error when the configuration is unusable: no
// Facilitator, no prices, an invalid route pattern or offer, a negative
// time budget or settle timeout, or an offer whose maxTimeoutSeconds is
// shorter than its route's time budget plus SettleTimeout.
func Middleware(cfg MiddlewareConfig) (func(http.Handler) http.Handler, error) {
	if cfg.Facilitator == nil {
		return nil, errors.New("x402: MiddlewareConfig.Facilitator is nil")
	}
	if cfg.PriceFunc == nil && len(cfg.Routes) == 0 {
		return nil, errors.New("x402: MiddlewareConfig has neither Routes nor PriceFunc")
	}
	switch {
	case cfg.SettleTimeout < 0:
		return nil, fmt.Errorf("x402: MiddlewareConfig.SettleTimeout %s is negative", cfg.SettleTimeout)
	case cfg.SettleTimeout == 0:
		cfg.SettleTimeout = DefaultSettleTimeout
	}
	mux := http.NewServeMux()
	for pattern, price := range cfg.Routes {
		if err := checkPrice(price, cfg.SettleTimeout); err != nil {
			return nil, fmt.Errorf("x402: route %q: %w", pattern, err)
		}
		if err := register(mux, pattern); err != nil {
			return nil, fmt.Errorf("x402: route %q: %v", pattern, err)
		}
	}
	pw := &paywall{cfg: cfg, mux: mux, replay: cfg.Replay, outcomes: cfg.Outcomes, log: cfg.Logger, tel: newPaywallTelemetry(&cfg)}
	if pw.outcomes == nil {
		pw.outcomes = &MemoryOutcomes{}
	}
	pw.cfg.Facilitator = pw.tel.facilitator(guard(cfg.Facilitator))
	if pw.replay == nil {
		pw.replay = &MemoryReplay{}
	}
	if pw.log == nil {
		pw.log = slog.New(slog.DiscardHandler)
	}
	return func(next http.Handler) http.Handler {
		rp, _ := next.(Replayer)
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			pw.serve(w, r, next, rp)
		})
	}, nil
}

// register adds pattern to mux, turning its panic on a bad pattern into an
// error.
func register(mux *http.ServeMux, pattern string) (err error) {
	defer func() {
		if p := recover(); p != nil {
			err = fmt.Errorf("%v", p)
		}
	}()
	mux.Handle(pattern, http.NotFoundHandler())
	return nil
}

// checkPrice rejects a price a payer could not pay.
func checkPrice(p Price, settle time.Duration) error {
	if len(p.Accepts) == 0 {
		return errors.New("no offers in Accepts")
	}
	if p.TimeBudget < 0 {
		return fmt.Errorf("time budget %s is negative", p.TimeBudget)
	}
	if err := checkSettlement(p); err != nil {
		return err
	}
	if p.Discovery != nil {
		if err := p.Discovery.check(); err != nil {
			return err
		}
	}
	need := p.validity(settle)
	for i, o := range p.Accepts {
		switch {
		case o.Scheme == "":
			return fmt.Errorf("offer %d: scheme is empty", i)
		case o.PayTo == "" || o.Asset == "":
			return fmt.Errorf("offer %d: payTo and asset are required", i)
		case o.MaxTimeoutSeconds <= 0:
			return fmt.Errorf("offer %d: maxTimeoutSeconds must be positive", i)
		case time.Duration(o.MaxTimeoutSeconds)*time.Second < need:
			return fmt.Errorf("offer %d: maxTimeoutSeconds %d is shorter than the %s an authorization must stay valid (time budget and settlement)", i, o.MaxTimeoutSeconds, need)
		}
		if _, ok := NetworkCAIP2(o.Network); !ok {
			return fmt.Errorf("offer %d: unknown network %q", i, o.Network)
		}
		if _, err := ParseAmount(o.Amount); err != nil {
			return fmt.Errorf("offer %d: %w", i, err)
		}
	}
	return nil
}

// timeBudget is p's time budget, the default for zero.
func (p Price) timeBudget() time.Duration {
	if p.TimeBudget == 0 {
		return DefaultTimeBudget
	}
	return p.TimeBudget
}

// validity is how long after it is received an authorization must stay
// valid: through the handler's time budget (unless settled before) and
// the settlement.
func (p Price) validity(settle time.Duration) time.Duration {
	if p.SettleBefore {
		return settle
	}
	return p.timeBudget() + settle
}

// Reasons of the 402 answers the middleware gives of its own (the
// others come from the facilitator).
const (
	msgNoProof = "a payment is required: send its proof in " + HeaderXPayment + " (x402 version 1) or " + HeaderPaymentSignature + " (version 2)"
	msgNoOffer = "the payment matches none of the accepted offers"
	msgUsed    = "the payment was already used"
)

type paywall struct {
	cfg      MiddlewareConfig
	mux      *http.ServeMux
	replay   ReplayStore
	outcomes OutcomeStore
	log      *slog.Logger
	tel      *paywallTelemetry

	mu       sync.Mutex
	settling map[string]chan struct{} // by replay key, closed when settled or failed
}

// beginSettling notes that the payment under key settles in this process,
// until the returned function is called.
func (pw *paywall) beginSettling(key string) (end func()) {
	done := make(chan struct{})
	pw.mu.Lock()
	if pw.settling == nil {
		pw.settling = make(map[string]chan struct{})
	}
	pw.settling[key] = done
	pw.mu.Unlock()
	return func() {
		pw.mu.Lock()
		delete(pw.settling, key)
		pw.mu.Unlock()
		close(done)
	}
}

// settlingNow returns a channel closed when the payment under key, which
// settles in this process now, has settled or failed; nil when it does
// not settle here now.
func (pw *paywall) settlingNow(key string) <-chan struct{} {
	pw.mu.Lock()
	defer pw.mu.Unlock()
	return pw.settling[key]
}

func (pw *paywall) now() time.Time {
	if pw.cfg.Now != nil {
		return pw.cfg.Now()
	}
	return time.Now()
}

// price returns the price of r, or false for a free request.
func (pw *paywall) price(r *http.Request) (Price, bool) {
	if pw.cfg.PriceFunc != nil {
		p, ok := pw.cfg.PriceFunc(r)
		return p, ok && len(p.Accepts) > 0
	}
	_, pattern := pw.mux.Handler(r)
	p, ok := pw.cfg.Routes[pattern]
	return p, ok
}

func (pw *paywall) serve(w http.ResponseWriter, r *http.Request, next http.Handler, rp Replayer) {
	price, ok := pw.price(r)
	if !ok {
		next.ServeHTTP(w, r)
		return
	}
	if pw.cfg.PriceFunc != nil {
		// Checked per request, as Middleware checks Routes once: a price
		// no payer could pay in time is a server error, not a 402.
		if err := checkPrice(price, pw.cfg.SettleTimeout); err != nil {
			pw.unavailable(w, "pricing", err)
			return
		}
	}
	if price.Discovery != nil {
		price.Discovery = price.Discovery.of(r.Method)
	}
	ctx := r.Context()
	w.Header().Add("Access-Control-Expose-Headers", exposed)
	res := ResourceInfo{URL: resourceURL(r), Description: price.Description, MimeType: price.MimeType}
	name, value := HeaderPaymentSignature, r.Header.Get(HeaderPaymentSignature)
	if value == "" {
		name, value = HeaderXPayment, r.Header.Get(HeaderXPayment)
	}
	if value == "" {
		pw.require(w, price, res, msgNoProof, nil)
		return
	}
	p, err := DecodePaymentPayload(value)
	if err != nil {
		var d *problem.Details
		if !errors.As(err, &d) {
			d = problem.New(http.StatusBadRequest, problem.CodeInvalidRequest, err.Error())
		}
		q := *d
		q.Detail = name + " header: " + q.Detail
		problem.Write(w, &q)
		return
	}
	if p.X402Version == Version1 {
		p.Resource = &res
	}
	now := pw.now()
	offer, vr, ok, err := pw.choose(ctx, price.Accepts, p, now)
	if err != nil {
		pw.unavailable(w, "facilitator verify", err)
		return
	}
	if !ok {
		pw.require(w, price, res, msgNoOffer, nil)
		return
	}
	key, until := replayKey(p, offer, now)
	fresh, err := pw.replay.Reserve(ctx, key, now, until)
	if err != nil {
		pw.unavailable(w, "replay store", err)
		return
	}
	if !fresh && price.Gate != nil {
		pw.gatedRepeat(w, r, price, res, p, key, now)
		return
	}
	if !fresh {
		pw.repeat(w, r, rp, price, res, p, offer, key, now)
		return
	}
	settled := false
	defer func() {
		if !settled { // verification failed, the handler failed or panicked
			pw.replay.Release(context.WithoutCancel(ctx), key)
		}
	}()
	if vb, ok := validBefore(p); ok {
		need := now.Add(price.validity(pw.cfg.SettleTimeout))
		if time.Unix(vb, 0).Before(need) {
			if pw.answerStored(w, r, rp, p, offer, vr) {
				return // an answer from the store needs no settlement
			}
			pw.require(w, price, res, fmt.Sprintf("%s: the authorization must stay valid through the route's time budget and settlement: validBefore %d is before %d", reasonValidity, vb, need.Unix()), nil)
			return
		}
	}
	if vr == nil {
		vr, err = pw.cfg.Facilitator.Verify(ctx, p, offer)
		if err != nil {
			pw.unavailable(w, "facilitator verify", err)
			return
		}
	}
	if !vr.IsValid {
		pw.log.LogAttrs(ctx, slog.LevelInfo, "x402: payment invalid", slog.String("reason", vr.InvalidReason), slog.String("payer", vr.Payer))
		pw.require(w, price, res, joinReason(vr.InvalidReason, vr.InvalidMessage), nil)
		return
	}

	vp := &VerifiedPayment{Payer: vr.Payer, Offer: offer, Payload: p}
	metered, m := withMeter(context.WithValue(ctx, verifiedCtx{}, vp), offer)
	work, cancel := context.WithTimeout(metered, price.timeBudget())
	defer cancel()
	paid := r.WithContext(work)
	if price.Gate != nil {
		settled = pw.gated(w, paid, next, m, price, res, p, offer, key, until, vr.Payer)
		return
	}
	if price.SettleBefore {
		if rec := stored(rp, paid); rec != nil {
			pw.deliverStored(ctx, w, rec, vr.Payer) // never settled
			return
		}
		settled = true // from here on the proof stays used, whatever the outcome
		sr, ok := pw.settle(w, r, price, res, p, offer, key, vr.Payer, nil)
		if !ok {
			return
		}
		vp.Settlement = sr
		next.ServeHTTP(w, paid)
		return
	}
	rec := &recorder{header: make(http.Header)}
	next.ServeHTTP(rec, paid)
	if rec.status >= 400 {
		rec.copyTo(w)
		return
	}
	if fromStore(rec.header) {
		pw.deliverStored(ctx, w, rec, vr.Payer) // never settled
		return
	}
	settled = true // from here on the proof stays used, whatever the outcome
	charged, u := m.charge(offer)
	if _, ok := pw.settle(w, r, price, res, p, charged, key, vr.Payer, u); !ok {
		return
	}
	rec.copyTo(w)
}

// reasonValidity is the reason of a 402 for an authorization that expires
// before the route's work and its settlement can end.
const reasonValidity = "authorization_validity_too_short"

// settle settles p on a context detached from the client's, so that a
// client that goes away cannot cancel a settlement the facilitator may
// complete anyway, and records the settlement for replay whatever the
// client does. On success it sets the payment headers on w, with the
// usage u of an "upto" payment, and returns the settlement; on failure it
// answers 402 and reports false.
func (pw *paywall) settle(w http.ResponseWriter, r *http.Request, price Price, res ResourceInfo, p *PaymentPayload, offer PaymentRequirements, key, payer string, u *Usage) (*SettleResponse, bool) {
	defer pw.beginSettling(key)()
	ctx, cancel := context.WithTimeout(context.WithoutCancel(r.Context()), pw.cfg.SettleTimeout)
	defer cancel()
	sr, err := pw.cfg.Facilitator.Settle(ctx, p, offer)
	if err != nil {
		pw.log.LogAttrs(ctx, slog.LevelWarn, "x402: settlement failed", slog.String("error", err.Error()))
		// The error's text stays in the log: it may name the
		// facilitator's hosts and users.
		sr = &SettleResponse{ErrorReason: "unexpected_settle_error", ErrorMessage: "the facilitator could not settle the payment", Network: offer.Network, Payer: payer}
	}
	if !sr.Success {
		pw.require(w, price, res, "settlement failed: "+joinReason(sr.ErrorReason, sr.ErrorMessage), sr)
		return nil, false
	}
	if sr.Payer == "" {
		sr.Payer = payer // the verified payer, kept for a repeat
	}
	withUsage(sr, u)
	pw.log.LogAttrs(ctx, slog.LevelInfo, "x402: settled", slog.String("transaction", sr.Transaction), slog.String("payer", sr.Payer), slog.String("network", sr.Network))
	if r.Header.Get(HeaderIdempotencyKey) != "" {
		// Recorded before the answer is sent, so that a repeat sent after
		// losing it finds the payment settled.
		sp := SettledPayment{Request: paidRequest(r, p), Settlement: *sr}
		if err := pw.replay.MarkSettled(ctx, key, sp); err != nil {
			pw.log.LogAttrs(ctx, slog.LevelWarn, "x402: recording the settlement for replay", slog.String("error", err.Error()))
		}
	}
	if err := setSettlement(w.Header(), sr, p.X402Version); err != nil {
		pw.unavailable(w, "encoding the settlement", err)
		return nil, false
	}
	return sr, true
}

// repeat answers a proof that was already accepted: with the answer its
// first use bought when that use was settled, the request is the same and
// the handler still has the answer, and with 402 otherwise.
func (pw *paywall) repeat(w http.ResponseWriter, r *http.Request, rp Replayer, price Price, res ResourceInfo, p *PaymentPayload, offer PaymentRequirements, key string, now time.Time) {
	if rp == nil || r.Header.Get(HeaderIdempotencyKey) == "" {
		pw.require(w, price, res, msgUsed, nil)
		return
	}
	ctx := r.Context()
	pending := pw.settlingNow(key) // taken first, so that its end is not missed
	sp, ok, err := pw.replay.LookupSettled(ctx, key, now)
	if err == nil && !ok && pending != nil {
		// The first use is settling in this process (its client may have
		// gone): wait for it rather than refuse the retry.
		select {
		case <-pending:
			sp, ok, err = pw.replay.LookupSettled(ctx, key, now)
		case <-ctx.Done():
		}
	}
	if err != nil {
		pw.unavailable(w, "replay store", err)
		return
	}
	if !ok || sp.Request != paidRequest(r, p) {
		pw.require(w, price, res, msgUsed, nil)
		return
	}
	// The handler sees the payer of the first use, as it did then, so
	// that it finds the answer it kept for that payer.
	vp := &VerifiedPayment{Payer: sp.Settlement.Payer, Offer: offer, Payload: p, Settlement: &sp.Settlement}
	rec := &recorder{header: make(http.Header)}
	if !rp.ServeReplay(rec, r.WithContext(context.WithValue(ctx, verifiedCtx{}, vp))) || rec.status >= 400 {
		pw.require(w, price, res, msgUsed, nil)
		return
	}
	pw.log.LogAttrs(ctx, slog.LevelInfo, "x402: answer delivered again", slog.String("transaction", sp.Settlement.Transaction), slog.String("payer", sp.Settlement.Payer))
	if err := setSettlement(w.Header(), &sp.Settlement, p.X402Version); err != nil {
		pw.unavailable(w, "encoding the settlement", err)
		return
	}
	rec.copyTo(w)
}

// paidRequest names the request a proof pays for: a digest of the
// method, the path, the Idempotency-Key and the proof's payload.
func paidRequest(r *http.Request, p *PaymentPayload) string {
	d := sha256.New()
	for _, s := range []string{r.Method, r.URL.Path, r.Header.Get(HeaderIdempotencyKey)} {
		io.WriteString(d, strconv.Itoa(len(s))+":"+s)
	}
	var buf bytes.Buffer
	if json.Compact(&buf, p.Payload) != nil {
		buf.Reset()
		buf.Write(p.Payload)
	}
	d.Write(buf.Bytes())
	return hex.EncodeToString(d.Sum(nil))
}

// require answers 402 with the terms of price in both versions, and with
// the settlement when one failed; no cache keeps it.
func (pw *paywall) require(w http.ResponseWriter, price Price, res ResourceInfo, reason string, sr *SettleResponse) {
	pw.tel.refused(reason, sr)
	v2 := PaymentRequired{X402Version: Version2, Error: reason, Resource: &res, Accepts: make([]PaymentRequirements, len(price.Accepts))}
	v1 := PaymentRequiredV1{X402Version: Version1, Error: reason, Accepts: make([]PaymentRequirementsV1, len(price.Accepts))}
	for i, o := range price.Accepts {
		v1.Accepts[i] = o.V1(res)
		o.Network, _ = NetworkCAIP2(o.Network)
		v2.Accepts[i] = o
	}
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	if err := price.describe(&v2, &v1); err != nil {
		pw.unavailable(w, "describing the route", err)
		return
	}
	value, err := EncodeHeader(v2)
	if err != nil {
		pw.unavailable(w, "encoding the terms", err)
		return
	}
	h.Set(HeaderPaymentRequired, value)
	if sr != nil {
		if err := setSettlement(h, sr, Version1); err != nil {
			pw.unavailable(w, "encoding the settlement", err)
			return
		}
	}
	body, err := json.Marshal(v1)
	if err != nil {
		pw.unavailable(w, "encoding the terms", err)
		return
	}
	h.Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusPaymentRequired)
	w.Write(append(body, '\n'))
}

func (pw *paywall) unavailable(w http.ResponseWriter, step string, err error) {
	pw.log.LogAttrs(context.Background(), slog.LevelError, "x402: "+step, slog.String("error", err.Error()))
	problem.Write(w, problem.Newf(http.StatusServiceUnavailable, problem.CodeUnavailable, "payment processing unavailable: %s failed", step))
}

// setSettlement puts sr in PAYMENT-RESPONSE, and for version 1 also in
// X-PAYMENT-RESPONSE.
func setSettlement(h http.Header, sr *SettleResponse, version int) error {
	value, err := EncodeHeader(sr)
	if err != nil {
		return err
	}
	h.Set(HeaderPaymentResponse, value)
	if version == Version1 {
		h.Set(HeaderXPaymentResponse, value)
	}
	return nil
}

func joinReason(reason, message string) string {
	switch {
	case reason == "":
		return message
	case message == "":
		return reason
	}
	return reason + ": " + message
}

// eip3009 is the authorization of an "exact" payload on an EVM network,
// as far as the middleware reads it.
type eip3009 struct {
	From        string `json:"from"`
	To          string `json:"to"`
	Value       string `json:"value"`
	ValidBefore string `json:"validBefore"`
	Nonce       string `json:"nonce"`
}

// authorizationOf returns the EIP-3009 authorization p carries, or nil
// when its payload is not one.
func authorizationOf(p *PaymentPayload) *eip3009 {
	var ex struct {
		Authorization *eip3009 `json:"authorization"`
	}
	if json.Unmarshal(p.Payload, &ex) != nil || ex.Authorization == nil || ex.Authorization.From == "" || ex.Authorization.Nonce == "" {
		return nil
	}
	return ex.Authorization
}

// replayKey names the authorization of a proof. An EIP-3009 authorization
// ("exact" on EVM networks, the core spec's payload) is named by network,
// asset, payer and nonce, as the token contract names it, and held until
// its validBefore; any other payload by the hash of its JSON, held for
// the offer's timeout.
func replayKey(p *PaymentPayload, offer PaymentRequirements, now time.Time) (string, time.Time) {
	network, _ := NetworkCAIP2(offer.Network)
	until := now.Add(time.Duration(max(offer.MaxTimeoutSeconds, 60)) * time.Second)
	if a := authorizationOf(p); a != nil {
		if vb, err := strconv.ParseInt(a.ValidBefore, 10, 64); err == nil && time.Unix(vb, 0).After(until) {
			until = time.Unix(vb, 0)
		}
		return strings.ToLower("eip3009:" + network + ":" + offer.Asset + ":" + a.From + ":" + a.Nonce), until
	}
	if owner, nonce, deadline, ok := permit2Of(p); ok {
		if time.Unix(deadline, 0).After(until) {
			until = time.Unix(deadline, 0)
		}
		return strings.ToLower("permit2:" + network + ":" + owner + ":" + nonce), until
	}
	var buf bytes.Buffer
	if json.Compact(&buf, p.Payload) != nil {
		buf.Write(p.Payload)
	}
	sum := sha256.Sum256(buf.Bytes())
	return "payload:" + network + ":" + hex.EncodeToString(sum[:]), until
}

// resourceURL is the absolute URL of the request as the server saw it.
func resourceURL(r *http.Request) string {
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return scheme + "://" + r.Host + r.URL.RequestURI()
}

// VerifiedPayment is a payment the facilitator verified, given to the
// handler of a priced request through its context. It is settled after
// the handler returns, if the handler succeeds.
type VerifiedPayment struct {
	// Payer is the address that signed the payment.
	Payer string
	// Offer is the route's offer the payment pays.
	Offer PaymentRequirements
	// Payload is the proof as received.
	Payload *PaymentPayload
	// Settlement is the settlement, on a route that settles before the
	// work (Price.SettleBefore); nil on the others, where the payment is
	// settled after the handler returns.
	Settlement *SettleResponse
}

type verifiedCtx struct{}

// Replayer is a paid handler that keeps its answers by Idempotency-Key
// and can deliver one again without doing the work again. [Middleware]
// calls ServeReplay, never ServeHTTP, for a repeat of a settled proof.
type Replayer interface {
	http.Handler
	// ServeReplay answers r with the answer kept for the earlier request
	// of the same caller with the same Idempotency-Key, method, path and
	// body, and reports true. The context of r carries the payment of
	// that earlier request ([PaymentFromContext]: its payer, as the
	// settlement reported it, and its settlement). When it has no such answer it reports false
	// and writes nothing. It must not do the request's work.
	ServeReplay(w http.ResponseWriter, r *http.Request) bool
}

// PaymentFromContext returns the verified payment of the request whose
// context is ctx, inside a handler behind [Middleware].
func PaymentFromContext(ctx context.Context) (*VerifiedPayment, bool) {
	vp, ok := ctx.Value(verifiedCtx{}).(*VerifiedPayment)
	return vp, ok
}
