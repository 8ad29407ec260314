package x402_test

import (
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/x402"
)

// TestMiddleware_ambiguousHeaders sends a valid proof with an
// Idempotency-Key sent twice or empty, or with the proof itself sent
// twice (in one header twice, or in both) or empty: the middleware refuses it
// with a 400 naming the header, in its detail and as the field of its
// field errors, before it looks at the payment, so the
// handler never runs, nothing settles, and the proof stays unspent for
// the retry that sends each header once.
func TestMiddleware_ambiguousHeaders(t *testing.T) {
	var handled atomic.Int32
	ps := newPaidServer(t, serverOptions{}, func(w http.ResponseWriter, r *http.Request) {
		handled.Add(1)
		echo(w, r)
	})
	v := proof(t, 2, nil)
	post := func(h http.Header) (*http.Response, []byte) {
		t.Helper()
		req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, ps.URL+"/paid", strings.NewReader("x"))
		for name, vals := range h {
			req.Header[name] = vals
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp, body
	}
	sig, xp := http.CanonicalHeaderKey(x402.HeaderPaymentSignature), http.CanonicalHeaderKey(x402.HeaderXPayment)
	key := x402.HeaderIdempotencyKey
	field := func(name, rule, message string) []problem.FieldError {
		return []problem.FieldError{{Field: name, Rule: rule, Message: message}}
	}
	const (
		twice      = "is sent 2 times; send it once"
		emptyKey   = "is empty; send 1 to 255 visible ASCII characters, or no Idempotency-Key header"
		emptySig   = "is empty; send the payment's proof, base64 of a JSON object, or no PAYMENT-SIGNATURE header"
		emptyXPay  = "is empty; send the payment's proof, base64 of a JSON object, or no X-PAYMENT header"
		bothDetail = "both PAYMENT-SIGNATURE and X-PAYMENT are sent; send one payment, in the header of its x402 version"
	)
	for _, tt := range []struct {
		name   string
		header http.Header
		detail string
		errors []problem.FieldError
	}{
		{"key sent twice", http.Header{sig: {v}, key: {"dupA", "dupB"}}, "Idempotency-Key " + twice, field("Idempotency-Key", "unique", twice)},
		{"key empty", http.Header{sig: {v}, key: {""}}, "Idempotency-Key " + emptyKey, field("Idempotency-Key", "required", emptyKey)},
		{"PAYMENT-SIGNATURE twice", http.Header{sig: {v, v}}, "PAYMENT-SIGNATURE " + twice, field("PAYMENT-SIGNATURE", "unique", twice)},
		{"X-PAYMENT twice", http.Header{xp: {v, v}}, "X-PAYMENT " + twice, field("X-PAYMENT", "unique", twice)},
		{"both proof headers", http.Header{sig: {v}, xp: {v}}, bothDetail, []problem.FieldError{
			{Field: "PAYMENT-SIGNATURE", Rule: "excluded_with", Message: "must be absent when X-PAYMENT is sent; send one payment, in the header of its x402 version"},
			{Field: "X-PAYMENT", Rule: "excluded_with", Message: "must be absent when PAYMENT-SIGNATURE is sent; send one payment, in the header of its x402 version"},
		}},
		{"PAYMENT-SIGNATURE empty", http.Header{sig: {""}}, "PAYMENT-SIGNATURE " + emptySig, field("PAYMENT-SIGNATURE", "required", emptySig)},
		{"X-PAYMENT empty", http.Header{xp: {""}}, "X-PAYMENT " + emptyXPay, field("X-PAYMENT", "required", emptyXPay)},
		{"X-PAYMENT empty beside a proof", http.Header{sig: {v}, xp: {""}}, "X-PAYMENT " + emptyXPay, field("X-PAYMENT", "required", emptyXPay)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			resp, body := post(tt.header)
			var got problem.Details
			if err := json.Unmarshal(body, &got); err != nil || resp.Header.Get("Content-Type") != problem.ContentType {
				t.Fatalf("%d %s: not a problem", resp.StatusCode, body)
			}
			want := problem.Details{Type: problem.TypePrefix + "invalid_request", Title: "Bad Request", Status: 400,
				Detail: tt.detail, Instance: "/paid", Code: problem.CodeInvalidRequest, Errors: tt.errors}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("problem (-want +got):\n%s", diff)
			}
		})
	}
	if n := handled.Load(); n != 0 {
		t.Fatalf("the handler ran %d times", n)
	}
	if resp, body := post(http.Header{sig: {v}, key: {"one"}}); resp.StatusCode != 200 {
		t.Errorf("the proof with one key: %d %s, want 200", resp.StatusCode, body)
	}
	if n := len(ps.fac.Settlements()); n != 1 {
		t.Errorf("the facilitator settled %d payments, want 1", n)
	}
}
