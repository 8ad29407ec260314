package x402

import (
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"strings"
	"time"

	"github.com/vouchkit/vouch/problem"
)

// ExtensionPaymentIdentifier is the x402 "payment-identifier" extension:
// a payer names its payment with an id of its own, and a retry with the
// same id and the same payment gets the first response instead of being
// charged again (specs/extensions/payment_identifier.md of the x402
// specification). [Transport] sends an id when the terms offer the
// extension; [Middleware] offers it on a route whose
// [Price].PaymentIdentifier is set.
const ExtensionPaymentIdentifier = extPaymentIdentifier

// The bounds of a payment identifier: 16 to 128 characters, letters,
// digits, '-' and '_'.
const (
	PaymentIDMinLength = 16
	PaymentIDMaxLength = 128
)

// PaymentIdentifier offers the "payment-identifier" extension on a route
// ([Price].PaymentIdentifier). A payment that carries an id is served
// once per payer and id (the payer its payload's authorization names, so
// that another payer's id never blocks or answers it; once per id for a
// payload that names none): a retry with the same id and the same
// payment (and request: method, path, Idempotency-Key, and, behind a
// router or trust Handler, the integration its credential names) gets
// the first response, status, body and PAYMENT-RESPONSE, without the
// work or the payment running again, on any server sharing the
// [PaymentIDStore]; the same id with another payment or request of the
// same payer is 409, and so is a retry while the first request still
// runs on another server: for as long as the first request may run (the
// route's time budget and four settlement timeouts), after which a retry
// is served as a new first request, so that a server that died with the
// id does not hold it until the id expires. The payment itself is still
// served once: a retry with the first payment gets its kept outcome. A first request that charged nothing (a 402, a
// 400, the facilitator unavailable) leaves its id free for a retry; one
// whose "auth-capture" hold stands after it (a capture the facilitator
// did not answer, which may still happen) keeps it, and the retry with
// the same payment gets that payment's outcome, completing the capture.
type PaymentIdentifier struct {
	// Required refuses a payment without an id with 400; otherwise such
	// a payment is served as usual.
	Required bool
}

// declaration is the extension as the route's 402 terms declare it.
func (pi *PaymentIdentifier) declaration() json.RawMessage {
	b, _ := json.Marshal(map[string]any{
		"info": map[string]bool{"required": pi.Required},
		"schema": map[string]any{
			"$schema": "https://json-schema.org/draft/2020-12/schema",
			"type":    "object",
			"properties": map[string]any{
				"required": map[string]string{"type": "boolean"},
				"id":       map[string]any{"type": "string", "minLength": PaymentIDMinLength, "maxLength": PaymentIDMaxLength, "pattern": "^[a-zA-Z0-9_-]+$"},
			},
			"required": []string{"required"},
		},
	})
	return b
}

// PaymentIDRecord is what a [PaymentIDStore] keeps of one payment id.
type PaymentIDRecord struct {
	// Request names the request and payment the id was first sent with
	// (a digest of the method, path, Idempotency-Key and payment
	// payload).
	Request string
	// Done reports whether the first request's response is kept, in
	// Response and Settlement; false while it runs.
	Done bool
	// Response is the first response, without the payment headers, and
	// Settlement the settlement of its PAYMENT-RESPONSE header.
	Response   BufferedResponse
	Settlement *SettleResponse
}

// PaymentIDStore keeps the first response to each payment id for
// [Middleware]: [MemoryPaymentIDs] in one process, x402/boltstore across
// restarts, pgstore across N servers and restarts. Implementations must
// be safe for concurrent use; package x402test's TestPaymentIDStore
// checks one.
type PaymentIDStore interface {
	// Begin records that the request named request runs now under id,
	// until the time until, and reports true; when id is recorded
	// already (and not expired at now), it changes nothing and returns
	// the record with false. Of concurrent Begins of one id, exactly
	// one reports true. until is a lease: a request that neither
	// finished nor released id by then is taken to have stopped (its
	// server died, say), and a later Begin takes id over.
	Begin(ctx context.Context, id, request string, now, until time.Time) (PaymentIDRecord, bool, error)
	// Finish keeps r, the response of the request that began id until
	// the time until, as its record (r.Done set), until the time keep
	// (later than until: a response is kept longer than its request
	// may run). until names that request's Begin: Finish does nothing
	// when id is recorded under another time, as it is once another
	// Begin took it over after its time (that Begin's time is later),
	// so that a request that outlived its record never overwrites the
	// record of the id's new first request.
	Finish(ctx context.Context, id string, until, keep time.Time, r PaymentIDRecord) error
	// Release forgets id, whose request (begun until the time until)
	// charged nothing, so that a retry may begin it again. Like Finish,
	// it does nothing when id is recorded under another time: a request
	// that outlived its record never frees the id its new first request
	// runs under.
	Release(ctx context.Context, id string, until time.Time) error
}

// paymentIDOf returns the id p carries in the "payment-identifier"
// extension, "" when it carries none, or the problem with it.
func paymentIDOf(p *PaymentPayload, required bool) (string, *problem.Details) {
	const field = "extensions.payment-identifier.info.id"
	var ext struct {
		Info struct {
			ID *string `json:"id"`
		} `json:"info"`
	}
	raw, ok := p.Extensions[extPaymentIdentifier]
	if ok && json.Unmarshal(raw, &ext) != nil {
		return "", problem.Invalid([]problem.FieldError{{Field: "extensions.payment-identifier", Rule: "object", Message: "must be an object with info"}})
	}
	if ext.Info.ID == nil {
		if required {
			return "", problem.Invalid([]problem.FieldError{{Field: field, Rule: "required", Message: "is required: this route takes a payment id (the payment-identifier extension)"}})
		}
		return "", nil
	}
	id := *ext.Info.ID
	if !validPaymentID(id) {
		return "", problem.Invalid([]problem.FieldError{{Field: field, Rule: "pattern", Message: "must be 16 to 128 letters, digits, '-' or '_'"}})
	}
	return id, nil
}

func validPaymentID(id string) bool {
	if len(id) < PaymentIDMinLength || len(id) > PaymentIDMaxLength {
		return false
	}
	for _, c := range id {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// scopedPaymentID returns the key under which the store keeps the
// payment id id of p: the id behind the payer p's payload names (the from
// of its EIP-3009 or Permit2 authorization), so that another payer
// sending the same id, by chance or to block the first, neither gets its
// response nor a 409; the id alone for a payload that names no payer.
// The payer is as claimed: a payment whose signature fails charges
// nothing, and its id is released.
func scopedPaymentID(p *PaymentPayload, id string) string {
	if from, ok := p.AuthorizationFrom(); ok {
		return strings.ToLower(from) + "/" + id
	}
	return id
}

// serveIdentified serves a payment that carries the id id: the first
// request under id runs as pay runs it, its response kept when it
// charged or may still charge (its PAYMENT-RESPONSE reports a settlement,
// or an escrow hold still standing) and the id released otherwise; a
// retry gets the kept response, or, for a hold that stood, runs as pay
// runs it, which answers with the payment's outcome.
func (pw *paywall) serveIdentified(w http.ResponseWriter, r *http.Request, id string, p *PaymentPayload, now time.Time, lease time.Duration, pay func(http.ResponseWriter)) {
	ctx := r.Context()
	keep := context.WithoutCancel(ctx)
	request := paidRequest(r, p)
	sid := scopedPaymentID(p, id)
	key := "payment-identifier:" + sid
	pending := pw.settlingNow(key)
	until, kept := now.Add(lease), now.Add(pw.cfg.MaxValidity)
	rec, fresh, err := pw.ids.Begin(ctx, sid, request, now, until)
	if err == nil && !fresh && !rec.Done && pending != nil {
		select { // the first request runs here: wait for its response
		case <-pending:
			rec, fresh, err = pw.ids.Begin(ctx, sid, request, now, until)
		case <-ctx.Done():
		}
	}
	switch {
	case err != nil:
		pw.unavailable(w, r, "payment id store", err)
		return
	case !fresh && rec.Request != request:
		writeProblem(w, r, problem.Newf(http.StatusConflict, problem.CodeConflict, "payment id %q was sent with another payment or request", id))
		return
	case !fresh && !rec.Done:
		writeProblem(w, r, problem.Newf(http.StatusConflict, problem.CodeConflict, "the first request with payment id %q is still running; retry later", id))
		return
	case !fresh && holdStands(rec.Settlement):
		// The first request left its escrow hold standing (a capture
		// unanswered, which may still happen): the payment's own outcome,
		// which its retry completes, answers.
		pay(w)
		return
	case !fresh:
		pw.log.LogAttrs(ctx, slog.LevelInfo, "x402: response delivered again by payment id", slog.String("id", id))
		if rec.Settlement != nil {
			if err := setSettlement(w.Header(), rec.Settlement, p.X402Version); err != nil {
				pw.unavailable(w, r, "encoding the settlement", err)
				return
			}
		}
		writeBuffered(w, rec.Response)
		return
	}
	defer pw.beginSettling(key)()
	answered := false
	defer func() {
		if !answered { // the handler panicked: nothing kept, the id freed
			pw.ids.Release(keep, sid, until)
		}
	}()
	out := &recorder{header: make(http.Header)}
	pay(out)
	answered = true
	sr, err := DecodeSettleResponse(out.header.Get(HeaderPaymentResponse))
	if err == nil && (sr.Success || holdStands(sr)) {
		resp := BufferedResponse{Status: cmpStatus(out.status), Header: out.header.Clone(), Body: out.body.Bytes()}
		for _, h := range []string{HeaderPaymentResponse, HeaderXPaymentResponse} {
			resp.Header.Del(h)
		}
		if err := pw.ids.Finish(keep, sid, until, kept, PaymentIDRecord{Request: request, Response: resp, Settlement: sr}); err != nil {
			pw.log.LogAttrs(ctx, slog.LevelWarn, "x402: keeping a response by payment id", slog.String("error", err.Error()))
		}
	} else if err := pw.ids.Release(keep, sid, until); err != nil {
		pw.log.LogAttrs(ctx, slog.LevelWarn, "x402: releasing a payment id", slog.String("error", err.Error()))
	}
	out.copyTo(w)
}

// cmpStatus is a recorded status, 200 when none was written.
func cmpStatus(status int) int {
	if status == 0 {
		return http.StatusOK
	}
	return status
}
