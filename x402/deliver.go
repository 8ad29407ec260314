package x402

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"time"

	"github.com/vouchkit/vouch/internal/fairstore"
	"github.com/vouchkit/vouch/internal/headerjson"
	"github.com/vouchkit/vouch/problem"
)

// DeliveryGate holds a paid answer back until a check passes it: on a
// route whose [Price] has a Gate, [Middleware] verifies the payment, runs
// the handler into a buffer, and gives the buyer's request and the
// buffered answer to Check, all within the route's time budget. Only an
// answer Check delivers is settled and sent; any other is refused: the
// buyer gets the refusal Check wrote, no payment headers, and its
// authorization is never settled, so no money moves.
//
// One proof has one outcome. The outcome, delivered (with its settlement)
// or refused, is kept with the proof in [MiddlewareConfig].Outcomes until
// the proof's replay record expires, and a retry with the same proof is
// answered from it: the handler does not run again, Check is not called
// again, nothing is settled again. The outcome is sent again only to the
// same request (method, path, Idempotency-Key and proof, and, behind a
// router or trust Handler, the integration its credential names), a
// delivered answer with the first settlement; any other request carrying
// the proof is answered 402 "already used". An answer of status 400 or
// more from the handler is sent as it is, without calling Check and
// without settling, and its proof is released, as on any priced route.
// A retry that arrives while the first use is still being checked is
// answered 402 "already used"; sent again once the first use has ended,
// it gets the kept outcome.
//
// The package x402 knows nothing of what a check does; package
// trust/trustpay validates the answer as the claimed result of the
// request through a trust service.
type DeliveryGate struct {
	// Check decides whether to deliver resp, the handler's answer to req.
	// req's body has been read: body holds it. ctx carries the route's
	// time budget, what is left of it after the handler ran; a check that
	// cannot decide within it should refuse, saying so. Required.
	Check DeliverFunc
	// MaxRequestBody bounds the request body the gate buffers for Check;
	// zero means 4 MiB. A larger body is answered 413 and not served.
	MaxRequestBody int64
}

// DeliverFunc decides whether a buffered answer is delivered; see
// [DeliveryGate].
type DeliverFunc func(ctx context.Context, req *http.Request, body []byte, resp *BufferedResponse) Delivery

// BufferedResponse is a handler's answer held back by [Middleware].
type BufferedResponse struct {
	// Status is the HTTP status.
	Status int
	// Header is the answer's header.
	Header http.Header
	// Body is the answer's body.
	Body []byte
}

// MarshalJSON writes b as encoding/json writes its fields, but for a
// header value that is not UTF-8 (obs-text such as "caf\xe9"), written as
// an object {"base64": "..."} of its bytes rather than with U+FFFD in
// place of them: an answer a store keeps as JSON is replayed byte for
// byte.
func (b BufferedResponse) MarshalJSON() ([]byte, error) {
	type fields BufferedResponse
	return json.Marshal(struct {
		fields
		Header headerjson.Header
	}{fields(b), headerjson.Header(b.Header)})
}

// UnmarshalJSON reads what MarshalJSON writes, and what encoding/json
// wrote of a BufferedResponse before it had the method.
func (b *BufferedResponse) UnmarshalJSON(data []byte) error {
	type fields BufferedResponse
	var r struct {
		fields
		Header headerjson.Header
	}
	if err := json.Unmarshal(data, &r); err != nil {
		return err
	}
	*b = BufferedResponse(r.fields)
	b.Header = http.Header(r.Header)
	return nil
}

// Delivery is the decision of a [DeliverFunc].
type Delivery struct {
	// Deliver sends the answer and settles the payment; false sends
	// Refusal instead and settles nothing.
	Deliver bool
	// Header is added to the answer sent, delivered or refused (a verdict
	// and a receipt id, say).
	Header http.Header
	// Refusal is sent when Deliver is false. A Status below 400 is sent
	// as 502, so that no client takes a refusal for the paid answer.
	Refusal BufferedResponse
	// Verdict names the decision in the record of an "auth-capture"
	// payment ([EscrowPayment].Verdict, [EscrowReport].Verdict), such as
	// a trust status; empty means "delivered" or "refused".
	Verdict string
}

// Outcome is what [Middleware] keeps of a proof spent on a gated route.
type Outcome struct {
	// Request names the request the proof was first sent with (see
	// [SettledPayment]).
	Request string
	// Payer is the payer the facilitator named when it verified the
	// proof. [MemoryOutcomes] keeps each payer's outcomes apart from
	// the others'.
	Payer string
	// Delivered reports whether the answer was delivered and settled.
	Delivered bool
	// Response is the answer sent: the delivered answer or the refusal,
	// with the gate's headers, without the payment headers.
	Response BufferedResponse
	// Settlement is the settlement of a delivered answer; nil for a
	// refusal.
	Settlement *SettleResponse
	// PendingCapture is, for an "auth-capture" payment whose capture
	// did not succeed but may still (the facilitator did not answer it,
	// or refused it for a reason that may pass; see [Escrow.Complete]),
	// the payment's id; empty otherwise. Response is then the answer the
	// capture buys, held back, and Usage the usage it captures: a retry
	// of the same request completes the capture, and gets the answer
	// once it is captured. [Middleware] also keeps an answer so before
	// it sends the capture, with no Settlement yet, and replaces it once
	// the capture is answered.
	PendingCapture string
	Usage          *Usage
}

// OutcomeStore keeps the outcomes of proofs spent on gated routes and
// on "auth-capture" routes: [MemoryOutcomes] in one process, pgstore
// across N servers and restarts. Servers that share a [ReplayStore] and
// an [EscrowLedger] share their OutcomeStore too, or the retry of a
// pending capture that reaches another server (or the same one
// restarted) finds no outcome and is answered 402 "already used", while
// package x402/escrow's Recovery captures the payment. Implementations
// must be safe for concurrent use, and report a done context before any
// work; package x402test's TestOutcomeStore checks one.
type OutcomeStore interface {
	// Keep records o under the proof's replay key until the time until,
	// in place of what was kept under it.
	Keep(ctx context.Context, key string, o Outcome, until time.Time) error
	// Lookup returns the outcome kept under key, and false when there is
	// none or it expired at now.
	Lookup(ctx context.Context, key string, now time.Time) (Outcome, bool, error)
}

// Bounds of a [MemoryOutcomes] whose members are zero.
const (
	// DefaultOutcomesMaxEntries bounds the outcomes kept in each budget.
	DefaultOutcomesMaxEntries = 10_000
	// DefaultOutcomesMaxBytes bounds the bytes of the responses kept in
	// each budget.
	DefaultOutcomesMaxBytes = 32 << 20
)

// outcomeOverhead is about what an outcome costs beyond its key and
// response body: the entry, its map slot, headers and settlement.
const outcomeOverhead = 512

// MemoryOutcomes is an OutcomeStore in memory, for one server process.
// Its zero value is ready to use; set its bounds before first use.
//
// Its memory is bounded whatever the payers sign: an outcome is kept
// until its time, but never longer than MaxRetention after Keep; and it
// holds three budgets, each of at most MaxEntries outcomes and MaxBytes
// bytes: the pending captures of "auth-capture" payments, delivered
// outcomes, and refusals (which no one paid for); and a fourth, as
// large, for the answers kept while their capture is sent (a pending
// capture without a Settlement), which their outcome replaces once the
// capture is answered. No outcome of one budget pushes out one of
// another: refusals never push out a delivered outcome, and none of
// them pushes out a pending capture, whose answer is the only copy of
// what its capture may still buy. Within a budget, payers
// ([Outcome].Payer) are kept apart: when it is full, the outcomes of the
// payer holding the most (the most outcomes when their count is full,
// the most bytes when their bytes are over) are dropped, the one expiring
// first each time, a payer's own first when it holds as much as any
// other: one payer's traffic, however heavy, drops another's outcome
// only once it holds as much as that other, and a payer that holds none
// always has room for one. An outcome larger than MaxBytes is not kept:
// Keep fails. A dropped or unkept delivered outcome or refusal costs
// only its retry: the proof stays used in the [ReplayStore], so its
// retry is answered 402 "already used" instead of the kept answer or
// refusal, and nothing is settled again. A dropped pending capture costs
// more: its capture may still happen (package x402/escrow's Recovery
// sends it) while its retry is answered 402, so the payer pays for an
// answer it cannot have; only other pending captures, which are as rare
// as captures the facilitator left unanswered, push one out. Expired
// outcomes are dropped as new ones arrive.
type MemoryOutcomes struct {
	// MaxRetention is the longest an outcome is kept; zero means
	// DefaultMaxValidity. [Middleware] refuses a store that forgets
	// sooner than its MaxValidity.
	MaxRetention time.Duration
	// MaxEntries bounds the outcomes kept in each budget; zero means
	// DefaultOutcomesMaxEntries.
	MaxEntries int
	// MaxBytes bounds the bytes kept in each budget, about 512 an
	// outcome beyond its key and body; zero means
	// DefaultOutcomesMaxBytes.
	MaxBytes int64
	// Now returns the current time, by which Keep bounds an outcome's
	// until by MaxRetention and drops expired outcomes; nil means
	// time.Now. It is the clock Lookup is given: [Middleware] sets a nil
	// Now to its [MiddlewareConfig].Now when it is built, so that an
	// outcome expires by one clock.
	Now func() time.Time

	pending, capturing, delivered, refused fairstore.Store[Outcome]
}

// Keep implements OutcomeStore. An until more than MaxRetention ahead is
// cut to MaxRetention.
func (s *MemoryOutcomes) Keep(ctx context.Context, key string, o Outcome, until time.Time) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	now := s.now()
	if limit := now.Add(cmp.Or(s.MaxRetention, DefaultMaxValidity)); until.After(limit) {
		until = limit
	}
	size := int64(len(key)+len(o.Request)+len(o.Payer)+len(o.Response.Body)) + outcomeOverhead
	maxEntries, maxBytes := cmp.Or(s.MaxEntries, DefaultOutcomesMaxEntries), cmp.Or(s.MaxBytes, DefaultOutcomesMaxBytes)
	budget := &s.delivered
	switch {
	case o.PendingCapture != "" && o.Settlement == nil:
		budget = &s.capturing
	case o.PendingCapture != "":
		budget = &s.pending
	case !o.Delivered:
		budget = &s.refused
	}
	for _, other := range s.budgets() {
		if other != budget {
			other.Delete(key)
		}
	}
	if !budget.Put(now, fairstore.Entry[Outcome]{Key: key, Owner: o.Payer, Value: o, Until: until, Size: size}, maxEntries, maxBytes) {
		return fmt.Errorf("x402: MemoryOutcomes: an outcome of %d bytes is larger than MaxBytes %d", size, maxBytes)
	}
	return nil
}

func (s *MemoryOutcomes) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

// Lookup implements OutcomeStore.
func (s *MemoryOutcomes) Lookup(ctx context.Context, key string, now time.Time) (Outcome, bool, error) {
	if err := ctx.Err(); err != nil {
		return Outcome{}, false, err
	}
	for _, budget := range s.budgets() {
		if o, ok := budget.Get(key, now); ok {
			return o, true, nil
		}
	}
	return Outcome{}, false, nil
}

// Len returns the number of outcomes held in the budgets, expired ones
// included until a later Keep into their budget drops them.
func (s *MemoryOutcomes) Len() int {
	n := 0
	for _, budget := range s.budgets() {
		n += budget.Len()
	}
	return n
}

// budgets returns the budgets of s; a key is held in one at most.
func (s *MemoryOutcomes) budgets() []*fairstore.Store[Outcome] {
	return []*fairstore.Store[Outcome]{&s.pending, &s.capturing, &s.delivered, &s.refused}
}

// msgNotDelivered is the refusal reason of an answer a gate refused.
const msgNotDelivered = "not_delivered"

// defaultMaxGatedBody is the request body a gate buffers by default.
const defaultMaxGatedBody = 4 << 20

// gatedBody reads the body of r, at most gate's MaxRequestBody, and
// returns r with the body to read again, and the body for the gate's
// Check; or the problem to answer.
func gatedBody(r *http.Request, gate *DeliveryGate) (*http.Request, []byte, *problem.Details) {
	limit := gate.MaxRequestBody
	if limit <= 0 {
		limit = defaultMaxGatedBody
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, limit+1))
	switch {
	case err != nil:
		return nil, nil, problem.Newf(http.StatusBadRequest, problem.CodeInvalidRequest, "reading the request body: %v", err)
	case int64(len(body)) > limit:
		return nil, nil, problem.Newf(http.StatusRequestEntityTooLarge, problem.CodeBodyTooLarge, "the request body is larger than %d bytes", limit)
	}
	req := r.Clone(r.Context())
	req.Body = io.NopCloser(bytes.NewReader(body))
	return req, body, nil
}

// refusal returns the answer of a delivery the gate refused (a 502 when
// the gate's refusal names no error status), and counts it.
func (pw *paywall) refusal(d Delivery) BufferedResponse {
	refusal := d.Refusal
	if refusal.Status < 400 {
		refusal.Status = http.StatusBadGateway
	}
	refusal.Header = mergeHeader(refusal.Header, d.Header)
	pw.tel.refused(msgNotDelivered, nil)
	return refusal
}

// gated serves a verified request on a gated route (see DeliveryGate),
// and reports whether the proof stays used: true once it was refused or
// settled, false when the handler failed and the proof may be sent again.
func (pw *paywall) gated(w http.ResponseWriter, r *http.Request, next http.Handler, m *meter, price Price, res ResourceInfo, p *PaymentPayload, offer PaymentRequirements, key string, until time.Time, payer string) bool {
	ctx := r.Context()
	req, body, bad := gatedBody(r, price.Gate)
	if bad != nil {
		writeProblem(w, r, bad)
		return false
	}
	rec := &recorder{header: make(http.Header)}
	m.serve(next, rec, req)
	if rec.status >= 400 {
		rec.copyTo(w)
		return false
	}
	if fromStore(rec.header) {
		pw.deliverStored(ctx, w, rec, payer) // bought before: never checked nor settled again
		return false
	}
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	charged, u := m.charge(offer) // the usage of an "upto" payment is the handler's to report
	req.Body = io.NopCloser(bytes.NewReader(body))
	d := price.Gate.Check(ctx, req, body, &BufferedResponse{Status: rec.status, Header: rec.header.Clone(), Body: bytes.Clone(rec.body.Bytes())})
	paid := paidRequest(r, p)
	keep := context.WithoutCancel(ctx)
	if !d.Deliver {
		refusal := pw.refusal(d)
		pw.log.LogAttrs(ctx, slog.LevelInfo, "x402: delivery refused, not settled", slog.Int("status", refusal.Status), slog.String("payer", payer))
		if err := pw.outcomes.Keep(keep, key, Outcome{Request: paid, Payer: payer, Response: refusal}, until); err != nil {
			pw.log.LogAttrs(ctx, slog.LevelWarn, "x402: keeping a refusal", slog.String("error", err.Error()))
		}
		writeBuffered(w, refusal)
		return true
	}
	// A repeat that waits for the settlement looks up the outcome: it is
	// kept before the repeat is let go.
	settled := pw.beginSettling(key)
	defer settled()
	sr, ok := pw.settle(w, r, price, res, p, charged, key, payer, u)
	if !ok {
		return true
	}
	delivered := BufferedResponse{Status: rec.status, Header: mergeHeader(rec.header, d.Header), Body: rec.body.Bytes()}
	if err := pw.outcomes.Keep(keep, key, Outcome{Request: paid, Payer: payer, Delivered: true, Response: delivered, Settlement: sr}, until); err != nil {
		pw.log.LogAttrs(ctx, slog.LevelWarn, "x402: keeping a delivery", slog.String("error", err.Error()))
	}
	settled()
	if vp, ok := PaymentFromContext(ctx); ok && vp.outcome != nil {
		vp.outcome.end(true) // before the answer leaves, so that its retry finds it kept
	}
	writeBuffered(w, delivered)
	return true
}

// gatedRepeat answers a proof already spent on a gated route from its
// kept outcome, or with 402 when there is none for this request.
func (pw *paywall) gatedRepeat(w http.ResponseWriter, r *http.Request, price Price, res ResourceInfo, p *PaymentPayload, key string, now, until time.Time) {
	ctx := r.Context()
	pending := pw.settlingNow(key)
	o, ok, err := pw.outcomes.Lookup(ctx, key, now)
	// The first use's outcome is to come, or its capture is pending:
	// kept before the capture is sent, which the first use may be
	// sending now. The repeat waits rather than send it again.
	if err == nil && (!ok || o.PendingCapture != "") && pending != nil {
		select {
		case <-pending:
			o, ok, err = pw.outcomes.Lookup(ctx, key, now)
		case <-ctx.Done():
		}
	}
	if err != nil {
		pw.unavailable(w, r, "outcome store", err)
		return
	}
	// The outcome is the first request's, a refusal as much as an
	// answer: what the gate said of the first answer (a trust verdict,
	// its evidence, a receipt id) is not another request's to read, nor
	// one that only names the same authorization (its payer and nonce).
	if !ok || o.Request != paidRequest(r, p) {
		pw.require(w, r, price, res, msgUsed, nil)
		return
	}
	if o.PendingCapture != "" && pw.escrow != nil {
		pw.completeCapture(w, r, p, key, until, o)
		return
	}
	if o.Settlement != nil { // a delivery's, or an escrow's void
		if err := setSettlement(w.Header(), o.Settlement, p.X402Version); err != nil {
			pw.unavailable(w, r, "encoding the settlement", err)
			return
		}
	}
	pw.log.LogAttrs(ctx, slog.LevelInfo, "x402: outcome delivered again", slog.Bool("delivered", o.Delivered))
	writeBuffered(w, o.Response)
}

// mergeHeader returns a copy of h with the values of add set over it.
func mergeHeader(h, add http.Header) http.Header {
	out := h.Clone()
	if out == nil {
		out = make(http.Header)
	}
	maps.Copy(out, add)
	return out
}

// writeBuffered sends b to w.
func writeBuffered(w http.ResponseWriter, b BufferedResponse) {
	h := w.Header()
	for k, v := range b.Header {
		if k == "Access-Control-Expose-Headers" {
			h[k] = append(h[k], v...)
			continue
		}
		h[k] = v
	}
	w.WriteHeader(b.Status)
	w.Write(b.Body)
}
