package pgstore

import (
	"net/http"

	"github.com/vouchkit/vouch/internal/headerjson"
	"github.com/vouchkit/vouch/x402"
)

// The JSON of what the stores keep of an answer writes its header with
// package headerjson, so that a header value that is not UTF-8 keeps its
// bytes; a record written as json.Marshal of the x402 type reads as
// before.

// responseRecord is the JSON of an x402.BufferedResponse.
type responseRecord struct {
	x402.BufferedResponse
	Header headerjson.Header
}

func newResponseRecord(r x402.BufferedResponse) responseRecord {
	return responseRecord{BufferedResponse: r, Header: headerjson.Header(r.Header)}
}

func (r responseRecord) response() x402.BufferedResponse {
	b := r.BufferedResponse
	b.Header = http.Header(r.Header)
	return b
}

// outcomeRecord is the JSON of an x402.Outcome.
type outcomeRecord struct {
	x402.Outcome
	Response responseRecord
}

func newOutcomeRecord(o x402.Outcome) outcomeRecord {
	return outcomeRecord{Outcome: o, Response: newResponseRecord(o.Response)}
}

func (r outcomeRecord) outcome() x402.Outcome {
	o := r.Outcome
	o.Response = r.Response.response()
	return o
}

// paymentIDRecord is the JSON of an x402.PaymentIDRecord.
type paymentIDRecord struct {
	x402.PaymentIDRecord
	Response responseRecord
}

func newPaymentIDRecord(r x402.PaymentIDRecord) paymentIDRecord {
	return paymentIDRecord{PaymentIDRecord: r, Response: newResponseRecord(r.Response)}
}

func (r paymentIDRecord) record() x402.PaymentIDRecord {
	p := r.PaymentIDRecord
	p.Response = r.Response.response()
	return p
}
