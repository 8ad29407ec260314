package x402

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"maps"
	"net/http"
	"time"

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
// A delivered answer is kept ([Outcome].Unpaid) before its payment is
// settled, and not settled when it cannot be kept (the buyer gets 503
// and its proof is released). When the settlement fails or goes
// unanswered, the buyer gets 402 with the facilitator's reason, and a
// retry of the same request with the same proof, on any server sharing
// the outcomes, settles it again and gets the kept answer once it
// settles, without running or checking it again. A settlement the
// facilitator made but whose answer was lost cannot be told from a
// proof spent elsewhere: sent again, it is refused as spent, and the
// retry gets 402 with that reason.
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
	// zero means 4 MiB. A larger body is answered 413 and not served,
	// before any payment is settled or, on an "auth-capture" route, held.
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
	// Unpaid is the answer of a gated route kept before its payment is
	// settled: [Middleware] keeps a delivery so before it asks the
	// facilitator to settle it, and settles nothing it could not keep,
	// so that no payer pays for an answer its retry cannot have. The
	// delivered outcome replaces it once it settles. Until then Response
	// is a 503 problem that asks for the request again (Delivered false,
	// no Settlement), so that a reader that does not know Unpaid (a
	// server of an earlier version on a shared store, a store that keeps
	// only the fields it knew) sends that, never the answer unpaid. One
	// still unpaid when its retry comes (the settlement failed, went
	// unanswered, or the server stopped before it went through) is
	// settled by the retry, with Usage the usage of an "upto" payment,
	// and delivered once it settles: the facilitator settles a proof at
	// most once, so no retry pays twice.
	Unpaid *BufferedResponse
	// SettleBy is, for an Unpaid answer, the time by which the
	// settlement sent for it is answered (when it was sent, plus the
	// sender's SettleTimeout), or the time it was answered without
	// settling. A retry that comes sooner, to a server that is not the
	// one settling it, is answered 503 with Retry-After: a second
	// settlement is never sent while the first may still go through.
	SettleBy time.Time `json:",omitzero"`
}

// unpaidResponse is an Unpaid outcome's Response: what a reader that
// does not know Unpaid sends.
func unpaidResponse() BufferedResponse {
	b := problemResponse(problem.New(http.StatusServiceUnavailable, problem.CodeUnavailable,
		"the answer is kept while its payment settles: send the request again with the same payment"))
	b.Header.Set("Retry-After", "1")
	return b
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
// its settlement was sent, false when the handler failed, or its answer
// could not be kept, and the proof may be sent again.
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
	delivered := BufferedResponse{Status: rec.status, Header: mergeHeader(rec.header, d.Header), Body: rec.body.Bytes()}
	// Kept before it is paid for: an answer that could not be kept is
	// not settled, and one whose settlement fails is settled again by
	// its retry.
	o := Outcome{Request: paid, Payer: payer, Response: unpaidResponse(), Usage: u, Unpaid: &delivered}
	if err := pw.keepSettling(ctx, key, &o, until); err != nil {
		pw.unavailable(w, r, "keeping the answer", err)
		return false
	}
	sr, ok := pw.settle(w, r, price, res, p, charged, key, payer, u)
	if !ok {
		pw.settleAnswered(ctx, key, o, until)
		return true
	}
	pw.keepDelivered(ctx, key, o, sr, until)
	settled()
	if vp, ok := PaymentFromContext(ctx); ok && vp.outcome != nil {
		vp.outcome.end(true) // before the answer leaves, so that its retry finds it kept
	}
	writeBuffered(w, delivered)
	return true
}

// gatedRepeat answers a proof already spent on a gated route from its
// kept outcome, or with 402 when there is none for this request.
func (pw *paywall) gatedRepeat(w http.ResponseWriter, r *http.Request, price Price, res ResourceInfo, p *PaymentPayload, offer PaymentRequirements, key string, now, until time.Time) {
	ctx := r.Context()
	var (
		o   Outcome
		ok  bool
		err error
	)
	for {
		pending := pw.settlingNow(key)
		o, ok, err = pw.outcomes.Lookup(ctx, key, now)
		// The first use's outcome is to come, or its payment is settling:
		// kept before the settlement or capture is sent, which the first
		// use may be sending now. The repeat waits rather than send it
		// again.
		if err == nil && (!ok || o.PendingCapture != "" || o.Unpaid != nil) && pending != nil {
			select {
			case <-pending:
				o, ok, err = pw.outcomes.Lookup(ctx, key, now)
			case <-ctx.Done():
			}
		}
		if err != nil || !ok || o.Unpaid == nil || o.Request != paidRequest(r, p) || ctx.Err() != nil {
			break
		}
		if pw.serveUnpaid(w, r, price, res, p, offer, key, until, o) {
			return
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
	if o.Unpaid != nil { // the retry went away while another settled it
		pw.unavailable(w, r, "settling the kept answer", ctx.Err())
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
