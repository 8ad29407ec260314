// Package trustpay makes x402 payments wait on trust: a seller's paid answer
// is delivered, and its payment settled, only when a trust validation finds
// it VALID. [Gate] is that check; [Prices] and [ChargeRuns] price the trust
// call, charging adaptive by the runs it launched. Package x402 knows
// nothing of trust; this package imports both.
package trustpay

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strings"

	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/x402"
)

// The headers of a gated answer.
const (
	// HeaderStatus carries the verdict on the seller's answer: a trust
	// status (VALID, INVALID, RETRY, NEEDS_SPEC), or TIMEOUT when the
	// validation did not finish within the route's time budget,
	// CANCELLED when the buyer's request was cancelled before it did (the
	// buyer hung up), or ERROR when it could not run.
	HeaderStatus = "Vouch-Status"
	// HeaderReceipt carries the id of the validation's receipt, which is
	// the seller's (see [Gate]). A buyer asks for one by sending it in
	// the request with the value "detached" or "inline".
	HeaderReceipt = "Vouch-Receipt"
)

// The values of HeaderStatus when there is no verdict.
const (
	StatusTimeout   = "TIMEOUT"
	StatusCancelled = "CANCELLED"
	StatusError     = "ERROR"
)

// Route is what a seller's gated route is validated against.
type Route struct {
	// Caller runs the validations: an in-process trust.Service or a
	// trust.Client of a remote one. Required.
	Caller trust.Caller
	// Policy is the route's tier; empty means trust.PolicySafe.
	Policy trust.Policy
	// Type is the task type the workers judge by, such as "summary".
	Type string
	// Spec states what a correct answer to the route's requests is.
	Spec json.RawMessage
	// Receipt asks every validation for a receipt; empty asks for none
	// (over HTTP a buyer may still ask with the Vouch-Receipt header).
	// Without a mode, its other members are the terms of the receipt a
	// buyer asks for, and are not sent when none is asked for.
	Receipt receipt.Request
	// Logger records why a validation could not run (the error of a
	// trust.Client names the trust service's address, which the buyer is
	// never told); nil is silent.
	Logger *slog.Logger
}

// Judgement is the outcome of validating a paid answer ([Route.Judge]).
type Judgement struct {
	// Status is the trust status of the validation, or StatusTimeout,
	// StatusCancelled or StatusError when there is no verdict.
	Status string
	// Response is the validation's answer; nil without a verdict.
	Response *trust.Response
	// ReceiptID names the validation's receipt, when one was made.
	ReceiptID string
	// Err is why there is no verdict.
	Err error
}

// Deliver reports whether the answer passed: its status is VALID.
func (j Judgement) Deliver() bool { return j.Status == string(trust.StatusValid) }

// Judge validates claim as the result of input, through rt.Caller at
// rt's tier against rt.Spec, asking for the receipt rcpt. A validation
// that has no VALID verdict when ctx's deadline passes is StatusTimeout,
// whatever its cut-short runs made of it; one whose ctx was cancelled
// first is StatusCancelled, its Err context.Canceled; one that fails
// otherwise is StatusError.
func (rt Route) Judge(ctx context.Context, input router.Input, claim json.RawMessage, rcpt receipt.Request) Judgement {
	policy := rt.Policy
	if policy == "" {
		policy = trust.PolicySafe
	}
	out, err := rt.Caller.Call(ctx, &trust.Request{
		Mode:    trust.ModeValidation,
		Policy:  policy,
		Task:    trust.Task{Type: rt.Type, Input: input, Spec: rt.Spec, ClaimedResult: claim},
		Receipt: rcpt,
	})
	if err == nil && out == nil {
		err = errors.New("trustpay: the Caller returned a nil response and a nil error")
	}
	// A call bounded by ctx answers before its deadline: with no vote in,
	// a 504 *trust.Error with code timeout.
	var p *trust.Error
	timedOut := ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) || errors.As(err, &p) && p.Code == problem.CodeTimeout
	switch {
	case errors.Is(ctx.Err(), context.Canceled) && (err != nil || out.Status != trust.StatusValid):
		return Judgement{Status: StatusCancelled, Err: context.Canceled}
	case timedOut && (err != nil || out.Status != trust.StatusValid):
		return Judgement{Status: StatusTimeout, Err: context.DeadlineExceeded}
	case err != nil:
		return Judgement{Status: StatusError, Err: err}
	}
	return Judgement{Status: string(out.Status), Response: out, ReceiptID: receiptID(out.Receipt)}
}

// Gate returns a delivery gate for an x402 route (x402.Price.Gate):
// each answer of the seller's handler is validated, through rt.Caller at
// rt's tier, as the claimed result of the buyer's request (the request
// body is the task input, the answer body the claimed result, rt.Spec the
// spec), and delivered and settled only when the status is VALID.
//
// The buyer sees why it was or was not charged: every answer carries
// Vouch-Status, and Vouch-Receipt when the buyer asked for a receipt.
// That receipt is the seller's: it is issued to the caller rt.Caller
// makes its calls as (for a trust.Client, the integration its key names;
// for an in-process trust.Service, the caller the request's context
// names with trust.WithCaller, else trust.DefaultCaller), which may fetch
// it and alone may report the validation's outcome (as [Disputes] does).
// The buyer, known to the route only by its payment and holding no
// credential of the trust service, gets its id alone, "inline" as
// "detached": a reference to cite, in a dispute say. A seller whose
// buyers should read the receipt shares it with them (rt.Receipt's
// visibility and counterparties). A
// refusal settles nothing and carries no payment header; it is an RFC
// 9457 problem:
//
//	502 not_delivered  the verdict was not VALID; extra holds status,
//	                   confidence, evidence, retry_instructions and
//	                   receipt_id (when a receipt was made)
//	504 timeout        the validation did not finish within the route's
//	                   time budget (which covers the seller's handler and
//	                   the validation)
//	503 unavailable    the buyer's request was cancelled before the
//	                   validation finished (Vouch-Status CANCELLED), or
//	                   the validation could not run (ERROR); the detail
//	                   is a fixed message, and the cause of an ERROR goes
//	                   to rt.Logger
//
// The middleware keeps the outcome with the proof: a retry with the same
// proof gets the same answer, without another validation or settlement.
//
// On an "auth-capture" route the payment is held before the seller's
// handler runs: a VALID answer is captured, any other verdict voids the
// hold (the refusal then carries the void in PAYMENT-RESPONSE), and the
// payment response's escrow report (x402.EscrowFromSettlement) names the
// verdict, as Vouch-Status does.
func Gate(rt Route) *x402.DeliveryGate {
	return &x402.DeliveryGate{Check: rt.check}
}

// refusal is the extra member of a not_delivered problem.
type refusal struct {
	Status            trust.Status             `json:"status"`
	Confidence        float64                  `json:"confidence"`
	Evidence          trust.Evidence           `json:"evidence"`
	RetryInstructions *trust.RetryInstructions `json:"retry_instructions"`
	ReceiptID         string                   `json:"receipt_id,omitempty"`
}

func (rt Route) check(ctx context.Context, req *http.Request, body []byte, resp *x402.BufferedResponse) x402.Delivery {
	rcpt := rt.Receipt
	switch m := receipt.Delivery(strings.ToLower(req.Header.Get(HeaderReceipt))); m {
	case receipt.DeliveryInline, receipt.DeliveryDetached:
		rcpt.Mode = m
	}
	if rcpt.Mode == "" || rcpt.Mode == receipt.DeliveryNone {
		rcpt = receipt.Request{} // the terms alone would be refused
	}
	j := rt.Judge(ctx, input(body), claim(resp.Body), rcpt)
	h := http.Header{"Access-Control-Expose-Headers": {HeaderStatus + ", " + HeaderReceipt}}
	h.Set(HeaderStatus, j.Status)
	if j.ReceiptID != "" {
		h.Set(HeaderReceipt, j.ReceiptID)
	}
	var p *problem.Details
	switch {
	case j.Deliver():
		return x402.Delivery{Deliver: true, Header: h, Verdict: j.Status}
	case j.Status == StatusTimeout:
		p = problem.New(http.StatusGatewayTimeout, problem.CodeTimeout,
			"the validation did not finish within the route's time budget, so the answer was not delivered and the payment was not settled")
	case j.Status == StatusCancelled:
		p = problem.New(http.StatusServiceUnavailable, problem.CodeUnavailable,
			"the request was cancelled before its answer was validated, so the answer was not delivered and the payment was not settled")
	case j.Status == StatusError:
		// The error stays in the log: a trust.Client's names the seller's
		// trust service.
		if rt.Logger != nil {
			rt.Logger.LogAttrs(ctx, slog.LevelError, "trustpay: validation could not run", slog.String("error", j.Err.Error()))
		}
		p = problem.New(http.StatusServiceUnavailable, problem.CodeUnavailable,
			"the answer could not be validated, so it was not delivered and the payment was not settled; try again later")
	default:
		out := j.Response
		p = problem.Newf(http.StatusBadGateway, problem.CodeNotDelivered, "the seller's answer was judged %s, so it was not delivered and the payment was not settled", out.Status)
		p.Extra, _ = json.Marshal(refusal{Status: out.Status, Confidence: out.Confidence, Evidence: out.Evidence, RetryInstructions: out.RetryInstructions, ReceiptID: j.ReceiptID})
	}
	return x402.Delivery{Header: h, Refusal: problemResponse(p), Verdict: j.Status}
}

// input is the buyer's request body as a task input: its JSON object or
// string, or else its text.
func input(body []byte) router.Input {
	var in router.Input
	if json.Unmarshal(body, &in) == nil && (in.Kind() == router.InputObject || in.Kind() == router.InputString) {
		return in
	}
	return router.NewStringInput(string(body))
}

// claim is the seller's answer as a claimed result: its JSON, or else
// its text as a JSON string.
func claim(body []byte) json.RawMessage {
	if json.Valid(body) {
		return body
	}
	return trust.JSON(string(body))
}

// receiptID reads receipt_id from a response's receipt member.
func receiptID(raw json.RawMessage) string {
	var r struct {
		ID string `json:"receipt_id"`
	}
	json.Unmarshal(raw, &r)
	return r.ID
}

// problemResponse is p as a buffered answer.
func problemResponse(p *problem.Details) x402.BufferedResponse {
	return x402.BufferedResponse{Status: p.Status, Header: http.Header{"Content-Type": {problem.ContentType}}, Body: problem.Encode(p)}
}
