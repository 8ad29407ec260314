package x402

import (
	"cmp"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"time"

	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
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
	// ([MiddlewareConfig.SettleTimeout]), counted from its arrival and
	// again once the facilitator has verified it, before the handler runs:
	// otherwise the work could be done and the authorization expire before
	// it is settled. TimeBudget plus
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
	// PaymentIdentifier, if not nil, offers the "payment-identifier"
	// extension in the route's 402 terms and serves each payment id
	// once (see [PaymentIdentifier]).
	PaymentIdentifier *PaymentIdentifier
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
	// are, on each request; one that fails the check (a price without
	// offers among them) is answered 503, and its request is not served.
	PriceFunc func(r *http.Request) (Price, bool)
	// Replay remembers accepted payments; nil means a new MemoryReplay.
	Replay ReplayStore
	// Outcomes keeps the outcomes of gated routes ([DeliveryGate]) and
	// "auth-capture" routes; nil means a new MemoryOutcomes, and a
	// MemoryOutcomes whose Now is nil is given this config's Now. Servers
	// that share a ReplayStore share Outcomes too, so that a retry on
	// any of them gets the outcome of its proof. A proof whose outcome
	// is kept is spent whatever the ReplayStore remembers: a server
	// whose outcomes outlive a restart (x402/boltstore) and whose
	// ReplayStore does not (a MemoryReplay) answers the retry of a proof
	// spent before it from the kept outcome.
	Outcomes OutcomeStore
	// PaymentIDs keeps the first response to each payment id on the
	// routes that offer the "payment-identifier" extension
	// ([Price].PaymentIdentifier); nil means a new MemoryPaymentIDs.
	// Servers that share a ReplayStore share PaymentIDs too, so that a
	// retry on any of them gets the first response.
	PaymentIDs PaymentIDStore
	// SettleTimeout bounds each of the facilitator's Verify and Settle
	// calls; zero means DefaultSettleTimeout. A verification not answered
	// in time is 503. Settlement runs on a context detached from the
	// client's, so that a client that disconnects cannot cancel it.
	SettleTimeout time.Duration
	// MaxValidity is the longest an authorization may stay valid after
	// it arrives (its validBefore, or a Permit2 deadline); zero means
	// DefaultMaxValidity. A longer one is refused with 402, reason
	// "authorization_validity_too_long", as is one beyond what 64-bit
	// Unix seconds hold (the token contracts take any uint256): the
	// server remembers a proof
	// (Replay, Outcomes) for as long as it can pay, and so never longer
	// than this, whatever the payer signs. Each offer's
	// maxTimeoutSeconds, the validity the official clients sign, must
	// not exceed it, and a MemoryReplay or MemoryOutcomes given as Replay
	// or Outcomes must keep entries at least as long (MaxRetention).
	MaxValidity time.Duration
	// Escrow configures the routes that offer "auth-capture"; it is
	// required when an offer's scheme is "auth-capture", and unused
	// otherwise. See [EscrowConfig] and "Escrow" in the package doc.
	Escrow *EscrowConfig
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
// problem whose field errors name the header (rule "encoding") when its
// value is not base64 of a JSON object, or the JSON path of each invalid
// member inside it. Such a problem of the request (and the 409 of a
// payment id in conflict) has the request path as its instance and, when
// the server named the request on the response's X-Request-Id header (as
// the router and trust handlers do), that id as its request_id. The proof
// must match one of the route's offers (a version 1 proof that several
// offers could take, such as offers that differ only in asset, pays the
// first the Facilitator verifies it against), must not have been accepted
// before (see [ReplayStore]), must, for an EIP-3009
// authorization (or a Permit2 one), stay valid until the route's time
// budget and the settlement have passed (reason
// "authorization_validity_too_short") and no longer than MaxValidity
// (reason "authorization_validity_too_long", so that the proof's record
// outlives it), and must pass the Facilitator's Verify; otherwise the answer is 402 with the
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
// An answer bought once is never charged again, and an answer is bought
// only when its payment settled: a handler that keeps answers for a
// repeat keeps one only once [AfterSettle] tells it the payment settled,
// and forgets it when the settlement failed, the gate refused the answer
// or the handler failed, so that the retry of such a call, with a new
// payment, is a new purchase (the work and the gate run again). A retry
// that carries a new payment (its payer's Transport no longer had the first proof) and
// that the handler answers from its idempotency store, without doing the
// work, is verified only: the payment must verify, which names the payer
// whose stored answer it gets, but it is never settled, its proof is
// released unspent, and the answer carries no PAYMENT-RESPONSE. On a
// route that settles before the work, a handler that is a [Replayer] is
// asked for its stored answer (ServeReplay) before the payment is settled,
// and so it is for an authorization too short for the route's work: an
// answer from the store needs no settlement.
//
// # Escrow
//
// A payment of an "auth-capture" offer is held before the handler runs
// and captured or voided after it, as the package doc's "Escrow" says;
// its answer carries the capture's or the void's settlement in the
// payment headers, with the lifecycle in the extension
// [ExtensionEscrow], and a retry of its proof gets that outcome again.
//
// The handler finds the verified payment with [PaymentFromContext]. Every
// answer on a priced route exposes the payment headers to browsers through
// Access-Control-Expose-Headers.
//
// Middleware returns an error when the configuration is unusable: no
// Facilitator, no prices, an invalid route pattern or offer, a negative
// time budget, settle timeout or MaxValidity, an offer whose
// maxTimeoutSeconds is shorter than its route's time budget plus
// SettleTimeout or longer than MaxValidity, or a MemoryReplay or
// MemoryOutcomes whose MaxRetention is shorter than MaxValidity; and for
// an "auth-capture" offer: no Escrow (or no Authorizer), a route that
// settles before its work, or a capture window shorter than the offer's
// maxTimeoutSeconds, the time budget and two settlements, or longer than
// MaxValidity.
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
	switch {
	case cfg.MaxValidity < 0:
		return nil, fmt.Errorf("x402: MiddlewareConfig.MaxValidity %s is negative", cfg.MaxValidity)
	case cfg.MaxValidity == 0:
		cfg.MaxValidity = DefaultMaxValidity
	}
	if r, ok := cfg.Replay.(*MemoryReplay); ok && r.retention() < cfg.MaxValidity {
		return nil, fmt.Errorf("x402: the MemoryReplay keeps a proof %s, less than MaxValidity %s: set its MaxRetention", r.retention(), cfg.MaxValidity)
	}
	if o, ok := cfg.Outcomes.(*MemoryOutcomes); ok && cmp.Or(o.MaxRetention, DefaultMaxValidity) < cfg.MaxValidity {
		return nil, fmt.Errorf("x402: the MemoryOutcomes keeps an outcome %s, less than MaxValidity %s: set its MaxRetention", cmp.Or(o.MaxRetention, DefaultMaxValidity), cfg.MaxValidity)
	}
	mux := http.NewServeMux()
	for pattern, price := range cfg.Routes {
		if err := checkPrice(price, cfg.SettleTimeout, cfg.MaxValidity); err != nil {
			return nil, fmt.Errorf("x402: route %q: %w", pattern, err)
		}
		if err := checkEscrow(price, cfg.Escrow, cfg.SettleTimeout, cfg.MaxValidity); err != nil {
			return nil, fmt.Errorf("x402: route %q: %w", pattern, err)
		}
		if err := register(mux, pattern); err != nil {
			return nil, fmt.Errorf("x402: route %q: %v", pattern, err)
		}
	}
	pw := &paywall{cfg: cfg, mux: mux, replay: cfg.Replay, outcomes: cfg.Outcomes, log: cfg.Logger, tel: newPaywallTelemetry(&cfg)}
	switch o := pw.outcomes.(type) {
	case nil:
		pw.outcomes = &MemoryOutcomes{MaxRetention: cfg.MaxValidity, Now: cfg.Now}
	case *MemoryOutcomes:
		if o.Now == nil {
			o.Now = cfg.Now
		}
	}
	pw.cfg.Facilitator = pw.tel.facilitator(verifyWithin{guard(cfg.Facilitator), cfg.SettleTimeout})
	if pw.replay == nil {
		pw.replay = &MemoryReplay{MaxRetention: cfg.MaxValidity}
	}
	if pw.ids = cfg.PaymentIDs; pw.ids == nil {
		pw.ids = &MemoryPaymentIDs{}
	}
	if pw.log == nil {
		pw.log = slog.New(slog.DiscardHandler)
	}
	if cfg.Escrow != nil && cfg.Escrow.Authorizer != nil {
		var err error
		if pw.escrow, err = NewEscrow(*cfg.Escrow, pw.cfg.Facilitator, cfg.SettleTimeout, cfg.Now, pw.log); err != nil {
			return nil, err
		}
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

// checkPrice rejects a price a payer could not pay, or whose proofs
// the server would forget while they can still pay (after maxValidity).
func checkPrice(p Price, settle, maxValidity time.Duration) error {
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
		if err := CheckOffer(o); err != nil {
			return fmt.Errorf("offer %d: %w", i, err)
		}
		switch {
		case o.MaxTimeoutSeconds <= 0:
			return fmt.Errorf("offer %d: maxTimeoutSeconds must be positive", i)
		case time.Duration(o.MaxTimeoutSeconds)*time.Second < need:
			return fmt.Errorf("offer %d: maxTimeoutSeconds %d is shorter than the %s an authorization must stay valid (time budget and settlement)", i, o.MaxTimeoutSeconds, need)
		case time.Duration(max(o.MaxTimeoutSeconds, minReplaySeconds))*time.Second > maxValidity:
			return fmt.Errorf("offer %d: maxTimeoutSeconds %d is longer than MaxValidity %s, the longest the server remembers a proof", i, o.MaxTimeoutSeconds, maxValidity)
		}
	}
	return nil
}

// CheckOffer reports why o is not an offer a payer can pay: an empty
// scheme, payTo or asset, a network x402 does not know ([NetworkCAIP2]),
// or an amount that does not parse ([ParseAmount]); nil when it is one.
// [Middleware] checks each route's offers with it, as other doors that
// sell with x402 can (package trustmcp's Paywall does).
func CheckOffer(o PaymentRequirements) error {
	switch _, known := NetworkCAIP2(o.Network); {
	case o.Scheme == "":
		return errors.New("scheme is empty")
	case o.PayTo == "" || o.Asset == "":
		return errors.New("payTo and asset are required")
	case !known:
		return fmt.Errorf("unknown network %q", o.Network)
	}
	_, err := ParseAmount(o.Amount)
	return err
}

// timeBudget is p's time budget, the default for zero.
func (p Price) timeBudget() time.Duration {
	if p.TimeBudget == 0 {
		return DefaultTimeBudget
	}
	return p.TimeBudget
}

// idLease is how long the first request of a payment id may run: the
// handler's time budget and four settlement timeouts (a verification, a
// hold, a settlement or capture, and the outcome's keeping).
func (p Price) idLease(settle time.Duration) time.Duration {
	return p.timeBudget() + 4*settle
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

// shortValidity returns why p's authorization, received at at, may
// expire before the route's work and its settlement end; "" when it will
// not, or when p names no validBefore.
func (pw *paywall) shortValidity(p *PaymentPayload, price Price, at time.Time) string {
	vb, _, ok := validBefore(p)
	// validBefore is exclusive: the authorization must still be valid at
	// the last second the settlement may land.
	need := at.Add(price.validity(pw.cfg.SettleTimeout))
	if !ok || time.Unix(vb, 0).After(need) {
		return ""
	}
	return fmt.Sprintf("%s: the authorization must stay valid through the route's time budget and settlement: validBefore %d is not after %d", reasonValidity, vb, need.Unix())
}

// lateAfterVerify returns why p, paying offer and just verified, leaves
// too little time from now for the work and its settlement, which the
// checks made as it arrived could not see: the verification took part
// of that time. An "auth-capture" payment's capture deadline must still
// be after the work and its two settlements (Escrow.Terms).
func (pw *paywall) lateAfterVerify(p *PaymentPayload, offer PaymentRequirements, price Price) string {
	now := pw.now()
	if offer.Scheme == SchemeAuthCapture {
		if _, late := pw.escrow.Terms(offer, p.Accepted, price, now); late != "" {
			return late
		}
	}
	return pw.shortValidity(p, price, now)
}
