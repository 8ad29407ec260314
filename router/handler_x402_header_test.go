package router_test

import (
	"encoding/base64"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/x402"
)

// TestHandler_x402BadProofHeader: a payment header that does not decode
// is a 400 problem that names the header as the field at fault, with the
// request's path and id as every problem of the handler carries them.
func TestHandler_x402BadProofHeader(t *testing.T) {
	ps := newPaidServer(t, &fakeService{})
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	const path = "/api/v2/x402/validate"
	for _, tt := range []struct {
		name, header, value string
		code                router.Code
		errors              []router.FieldError
	}{
		{"garbage", x402.HeaderXPayment, "garbage", "malformed_json", []router.FieldError{{Field: "X-PAYMENT", Rule: "encoding",
			Message: "the value is not base64 of JSON: it decodes to 5 bytes of binary data, not UTF-8 text"}}},
		{"an array", x402.HeaderPaymentSignature, b64(`[]`), "malformed_json", []router.FieldError{{Field: "PAYMENT-SIGNATURE", Rule: "encoding",
			Message: "the value is base64 of a JSON array; it must be base64 of a JSON object"}}},
		{"not base64", x402.HeaderPaymentSignature, "@@@@", "malformed_json", []router.FieldError{{Field: "PAYMENT-SIGNATURE", Rule: "encoding",
			Message: "the value is not standard base64: illegal base64 data at input byte 0"}}},
		{"a member", x402.HeaderPaymentSignature, b64(`{"x402Version":"2"}`), "invalid_request", []router.FieldError{{Field: "x402Version", Rule: "type",
			Message: "expected a number, got string"}}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := send(t, "POST", ps.URL+path, `{}`, "Authorization", "", tt.header, tt.value)
			got := r.problem(t)
			want := router.Error{
				Type: "urn:vouch:problem:" + string(tt.code), Title: "Bad Request", Status: 400,
				Detail:   tt.header + " header: " + tt.errors[0].Field + ": " + tt.errors[0].Message,
				Instance: path, Code: tt.code, RequestID: r.header.Get("X-Request-Id"), Errors: tt.errors,
			}
			if tt.errors[0].Field == tt.header {
				want.Detail = tt.header + " header: " + tt.errors[0].Message
			}
			if diff := cmp.Diff(want, got); diff != "" || want.RequestID == "" {
				t.Errorf("problem (-want +got):\n%s", diff)
			}
		})
	}
}
