package x402

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"sync"
	"time"

	"github.com/vouchkit/vouch/internal/httpapi"
	"github.com/vouchkit/vouch/problem"
)

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
	ids      PaymentIDStore
	log      *slog.Logger
	tel      *paywallTelemetry
	// escrow runs the lifecycle of "auth-capture" payments; nil without
	// MiddlewareConfig.Escrow.
	escrow *Escrow

	mu       sync.Mutex
	settling map[string]chan struct{} // by replay key, closed when settled or failed
}

func (pw *paywall) now() time.Time {
	if pw.cfg.Now != nil {
		return pw.cfg.Now()
	}
	return time.Now()
}

// price returns the price of r, or false for a free request. A price
// PriceFunc reports without offers is a price still: serve refuses it
// (checkPrice) rather than serving the request for free.
func (pw *paywall) price(r *http.Request) (Price, bool) {
	if pw.cfg.PriceFunc != nil {
		return pw.cfg.PriceFunc(r)
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
		if err := checkPrice(price, pw.cfg.SettleTimeout, pw.cfg.MaxValidity); err != nil {
			pw.unavailable(w, r, "pricing", err)
			return
		}
		if err := checkEscrow(price, pw.cfg.Escrow, pw.cfg.SettleTimeout, pw.cfg.MaxValidity); err != nil {
			pw.unavailable(w, r, "pricing", err)
			return
		}
	}
	if price.Discovery != nil {
		price.Discovery = price.Discovery.of(r.Method)
	}
	w.Header().Add("Access-Control-Expose-Headers", exposed)
	// A proof is bound to its request's key (a repeat gets the answer it
	// bought only with the same key): a key sent empty, twice or of
	// another form is refused before the payment is looked at.
	if _, p := httpapi.IdempotencyKey(r.Header); p != nil {
		writeProblem(w, r, p)
		return
	}
	res := ResourceInfo{URL: resourceURL(r), Description: price.Description, MimeType: price.MimeType}
	name, value, bad := paymentHeader(r.Header)
	if bad != nil {
		writeProblem(w, r, bad)
		return
	}
	if value == "" {
		pw.require(w, r, price, res, msgNoProof, nil)
		return
	}
	version := Version2
	if name == HeaderXPayment {
		version = Version1
	}
	p, err := decodePaymentPayload(value, version)
	if err != nil {
		writeProblem(w, r, headerProblem(name, err))
		return
	}
	if p.X402Version == Version1 {
		p.Resource = &res
	}
	now := pw.now()
	if price.PaymentIdentifier != nil && p.X402Version == Version2 {
		id, bad := paymentIDOf(p, price.PaymentIdentifier.Required)
		if bad != nil {
			writeProblem(w, r, headerProblem(name, bad))
			return
		}
		if id != "" {
			pw.serveIdentified(w, r, id, p, now, price.idLease(pw.cfg.SettleTimeout), func(w http.ResponseWriter) { pw.pay(w, r, next, rp, price, res, p, now) })
			return
		}
	}
	pw.pay(w, r, next, rp, price, res, p, now)
}

// pay serves r, whose payment p is decoded, at price: it chooses the
// offer p pays, verifies the payment, runs next and settles as the
// offer's scheme and the route ask.
func (pw *paywall) pay(w http.ResponseWriter, r *http.Request, next http.Handler, rp Replayer, price Price, res ResourceInfo, p *PaymentPayload, now time.Time) {
	ctx := r.Context()
	offers := price.Accepts
	if p.Accepted.Scheme == SchemeAuthCapture {
		// Offers that differ only in their extra (the asset-transfer
		// method) are told apart by it.
		offers = escrowCandidates(offers, p.Accepted)
	}
	offer, vr, ok, err := pw.choose(ctx, offers, p, now)
	if err != nil {
		pw.unavailable(w, r, "facilitator verify", err)
		return
	}
	if !ok {
		pw.require(w, r, price, res, msgNoOffer, nil)
		return
	}
	late := "" // why the deadlines leave no room for new work: only a repeat passes
	if offer.Scheme == SchemeAuthCapture {
		var ok bool
		if offer, late, ok = pw.acceptedTerms(offer, p, price, now); !ok {
			pw.require(w, r, price, res, late, nil)
			return
		}
		vr = nil // verified below against these deadlines
	}
	if vb, text, ok := validBefore(p); ok {
		if limit := now.Add(pw.cfg.MaxValidity); time.Unix(vb, 0).After(limit) {
			// Its record would have to outlive what the stores keep.
			pw.require(w, r, price, res, fmt.Sprintf("%s: the authorization may stay valid for at most %s: validBefore %s is after %d", reasonValidityTooLong, pw.cfg.MaxValidity, truncate(text, 40), limit.Unix()), nil)
			return
		}
	}
	key, until := replayKey(p, offer, now)
	until = KeepProofUntil(offer, until, now.Add(pw.cfg.MaxValidity))
	fresh, err := pw.replay.Reserve(ctx, key, now, until)
	if err != nil {
		pw.unavailable(w, r, "replay store", err)
		return
	}
	if fresh && (price.Gate != nil || offer.Scheme == SchemeAuthCapture) {
		// A replay store that forgot the proof (one in memory, restarted)
		// beside outcomes that remember it (kept on disk): the proof was
		// spent, and its retry gets its outcome.
		if _, kept, err := pw.outcomes.Lookup(ctx, key, now); err != nil {
			pw.log.LogAttrs(ctx, slog.LevelWarn, "x402: looking up the outcome of a new proof", slog.String("error", err.Error()))
		} else if kept {
			fresh = false
		}
	}
	if fresh && late != "" { // no repeat: a new payment too late for the work
		pw.replay.Release(context.WithoutCancel(ctx), key, until)
		pw.require(w, r, price, res, late, nil)
		return
	}
	if !fresh && (price.Gate != nil || offer.Scheme == SchemeAuthCapture) {
		pw.gatedRepeat(w, r, price, res, p, offer, key, now, until)
		return
	}
	if !fresh {
		pw.repeat(w, r, rp, price, res, p, offer, key, now)
		return
	}
	settled := false
	defer func() {
		if !settled { // verification failed, the handler failed or panicked
			pw.replay.Release(context.WithoutCancel(ctx), key, until)
		}
	}()
	if short := pw.shortValidity(p, price, now); short != "" {
		if pw.answerStored(w, r, rp, p, offer, vr) {
			return // an answer from the store needs no settlement
		}
		pw.require(w, r, price, res, short, nil)
		return
	}
	if vr == nil {
		vr, err = pw.cfg.Facilitator.Verify(ctx, p, offer)
		if err != nil {
			pw.unavailable(w, r, "facilitator verify", err)
			return
		}
	}
	if !vr.IsValid {
		pw.log.LogAttrs(ctx, slog.LevelInfo, "x402: payment invalid", slog.String("reason", vr.InvalidReason), slog.String("payer", vr.Payer))
		pw.require(w, r, price, res, joinReason(vr.InvalidReason, vr.InvalidMessage), nil)
		return
	}
	if late := pw.lateAfterVerify(p, offer, price); late != "" {
		pw.require(w, r, price, res, late, nil)
		return
	}

	vp := &VerifiedPayment{Payer: vr.Payer, Offer: offer, Payload: p}
	if !price.SettleBefore {
		// Until settled, the answer is not bought: whatever the handler
		// keeps of it for AfterSettle is released on every other way out.
		vp.outcome = &paymentOutcome{}
		defer vp.outcome.end(false)
	}
	metered, m := withMeter(context.WithValue(ctx, verifiedCtx{}, vp), offer)
	work, cancel := context.WithTimeout(metered, price.timeBudget())
	defer cancel()
	paid := r.WithContext(work)
	if offer.Scheme == SchemeAuthCapture {
		settled = true // kept used if the handler panics: the hold was voided
		settled = pw.serveEscrow(w, paid, next, m, price, res, p, offer, key, until, vr.Payer)
		return
	}
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
		end := pw.beginSettling(key)
		defer end() // a waiting repeat goes even if settle panics
		sr, ok := pw.settle(w, r, price, res, p, offer, key, vr.Payer, nil)
		end()
		if !ok {
			return
		}
		vp.Settlement = sr
		next.ServeHTTP(w, paid)
		return
	}
	rec := &recorder{header: make(http.Header)}
	m.serve(next, rec, paid)
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
	end := pw.beginSettling(key) // until the handler has kept its answer
	defer end()
	if _, ok := pw.settle(w, r, price, res, p, charged, key, vr.Payer, u); !ok {
		return
	}
	vp.outcome.end(true) // before the answer leaves, so that its retry finds it kept
	end()
	rec.copyTo(w)
}

// reasonValidity is the reason of a 402 for an authorization that expires
// before the route's work and its settlement can end.
const reasonValidity = "authorization_validity_too_short"

// reasonValidityTooLong is the reason of a 402 for an authorization valid
// for longer than the server remembers proofs (MaxValidity).
const reasonValidityTooLong = "authorization_validity_too_long"

// settle settles p on a context detached from the client's, so that a
// client that goes away cannot cancel a settlement the facilitator may
// complete anyway, and records the settlement for replay whatever the
// client does. On success it sets the payment headers on w, with the
// usage u of an "upto" payment, and returns the settlement; on failure it
// answers 402 and reports false. The caller notes that the payment
// settles (beginSettling) until what a repeat waiting for it looks up is
// recorded.
func (pw *paywall) settle(w http.ResponseWriter, r *http.Request, price Price, res ResourceInfo, p *PaymentPayload, offer PaymentRequirements, key, payer string, u *Usage) (*SettleResponse, bool) {
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
		pw.require(w, r, price, res, "settlement failed: "+joinReason(sr.ErrorReason, sr.ErrorMessage), sr)
		return nil, false
	}
	if sr.Payer == "" {
		sr.Payer = payer // the verified payer, kept for a repeat
	}
	withUsage(sr, u)
	pw.log.LogAttrs(ctx, slog.LevelInfo, "x402: settled", slog.String("transaction", sr.Transaction), slog.String("payer", sr.Payer), slog.String("network", sr.Network))
	if sr.Amount != "" && sr.Amount != offer.Amount {
		// Passed on as the facilitator answered: what moved is its word.
		pw.log.LogAttrs(ctx, slog.LevelWarn, "x402: the facilitator settled another amount than the one charged",
			slog.String("charged", offer.Amount), slog.String("settled", sr.Amount), slog.String("transaction", sr.Transaction))
	}
	if r.Header.Get(HeaderIdempotencyKey) != "" {
		// Recorded before the answer is sent, so that a repeat sent after
		// losing it finds the payment settled.
		sp := SettledPayment{Request: paidRequest(r, p), Settlement: *sr}
		if err := pw.replay.MarkSettled(ctx, key, sp); err != nil {
			pw.log.LogAttrs(ctx, slog.LevelWarn, "x402: recording the settlement for replay", slog.String("error", err.Error()))
		}
	}
	if err := setSettlement(w.Header(), sr, p.X402Version); err != nil {
		pw.unavailable(w, r, "encoding the settlement", err)
		return nil, false
	}
	return sr, true
}

// repeat answers a proof that was already accepted: with the answer its
// first use bought when that use was settled, the request is the same and
// the handler still has the answer, and with 402 otherwise.
func (pw *paywall) repeat(w http.ResponseWriter, r *http.Request, rp Replayer, price Price, res ResourceInfo, p *PaymentPayload, offer PaymentRequirements, key string, now time.Time) {
	if rp == nil || r.Header.Get(HeaderIdempotencyKey) == "" {
		pw.require(w, r, price, res, msgUsed, nil)
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
		pw.unavailable(w, r, "replay store", err)
		return
	}
	if !ok || sp.Request != paidRequest(r, p) {
		pw.require(w, r, price, res, msgUsed, nil)
		return
	}
	// The handler sees the payer of the first use, as it did then, so
	// that it finds the answer it kept for that payer.
	vp := &VerifiedPayment{Payer: sp.Settlement.Payer, Offer: offer, Payload: p, Settlement: &sp.Settlement}
	replay := func() (*recorder, bool) {
		rec := &recorder{header: make(http.Header)}
		return rec, rp.ServeReplay(rec, r.WithContext(context.WithValue(ctx, verifiedCtx{}, vp))) && rec.status < 400
	}
	rec, ok := replay()
	if !ok && pending != nil {
		// Settled, but the handler may not have kept its answer yet.
		select {
		case <-pending:
			rec, ok = replay()
		case <-ctx.Done():
		}
	}
	if !ok {
		pw.require(w, r, price, res, msgUsed, nil)
		return
	}
	pw.log.LogAttrs(ctx, slog.LevelInfo, "x402: answer delivered again", slog.String("transaction", sp.Settlement.Transaction), slog.String("payer", sp.Settlement.Payer))
	if err := setSettlement(w.Header(), &sp.Settlement, p.X402Version); err != nil {
		pw.unavailable(w, r, "encoding the settlement", err)
		return
	}
	rec.copyTo(w)
}

// require answers 402 with the terms of price in both versions, and with
// the settlement when one failed; no cache keeps it.
func (pw *paywall) require(w http.ResponseWriter, r *http.Request, price Price, res ResourceInfo, reason string, sr *SettleResponse) {
	pw.tel.refused(reason, sr)
	v2 := PaymentRequired{X402Version: Version2, Error: reason, Resource: &res, Accepts: make([]PaymentRequirements, len(price.Accepts))}
	v1 := PaymentRequiredV1{X402Version: Version1, Error: reason, Accepts: make([]PaymentRequirementsV1, len(price.Accepts))}
	now := pw.now()
	for i, o := range price.Accepts {
		if pw.escrow != nil {
			o = pw.escrow.Offer(o, now)
		}
		v1.Accepts[i] = o.V1(res)
		o.Network, _ = NetworkCAIP2(o.Network)
		v2.Accepts[i] = o
	}
	h := w.Header()
	h.Set("Cache-Control", "no-store")
	if err := price.describe(&v2, &v1); err != nil {
		pw.unavailable(w, r, "describing the route", err)
		return
	}
	if price.PaymentIdentifier != nil {
		if v2.Extensions == nil {
			v2.Extensions = make(map[string]json.RawMessage, 1)
		}
		v2.Extensions[ExtensionPaymentIdentifier] = price.PaymentIdentifier.declaration()
	}
	value, err := EncodeHeader(v2)
	if err != nil {
		pw.unavailable(w, r, "encoding the terms", err)
		return
	}
	h.Set(HeaderPaymentRequired, value)
	if sr != nil {
		if err := setSettlement(h, sr, Version1); err != nil {
			pw.unavailable(w, r, "encoding the settlement", err)
			return
		}
	}
	body, err := json.Marshal(v1)
	if err != nil {
		pw.unavailable(w, r, "encoding the terms", err)
		return
	}
	h.Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusPaymentRequired)
	w.Write(append(body, '\n'))
}

// unavailable answers r with 503: step failed with err, which is logged
// and not shown.
func (pw *paywall) unavailable(w http.ResponseWriter, r *http.Request, step string, err error) {
	pw.log.LogAttrs(r.Context(), slog.LevelError, "x402: "+step, slog.String("error", err.Error()))
	writeProblem(w, r, problem.Newf(http.StatusServiceUnavailable, problem.CodeUnavailable, "payment processing unavailable: %s failed", step))
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
