package x402_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// TestFacilitatorHandler_requirementsFieldPaths: requirements a facilitator
// handler cannot read are a 400 whose field error names the member by its
// path from the body, in either version, and requirements sent as null
// are refused as absent rather than verified as empty ones.
func TestFacilitatorHandler_requirementsFieldPaths(t *testing.T) {
	f := &askedFacilitator{Facilitator: &evm.Facilitator{Networks: []string{"base-sepolia"}}}
	srv := httptest.NewServer(x402.NewFacilitatorHandler(f))
	defer srv.Close()
	const v2 = `{"x402Version":2,"paymentPayload":{"x402Version":2,"accepted":{"scheme":"exact","network":"eip155:84532"},"payload":{}},"paymentRequirements":`
	const v1 = `{"x402Version":1,"paymentPayload":{"x402Version":1,"scheme":"exact","network":"base-sepolia","payload":{}},"paymentRequirements":`
	for _, tc := range []struct {
		name, body string
		want       problem.FieldError
	}{
		{"v2 amount a number", v2 + `{"scheme":"exact","amount":5}}`,
			problem.FieldError{Field: "paymentRequirements.amount", Rule: "type", Message: "expected a string, got number"}},
		{"v1 maxAmountRequired a number", v1 + `{"scheme":"exact","maxAmountRequired":5}}`,
			problem.FieldError{Field: "paymentRequirements.maxAmountRequired", Rule: "type", Message: "expected a string, got number"}},
		{"a string", v2 + `"exact"}`,
			problem.FieldError{Field: "paymentRequirements", Rule: "type", Message: "expected an object, got string"}},
		{"null", v2 + `null}`,
			problem.FieldError{Field: "paymentRequirements", Rule: "required", Message: "is required"}},
	} {
		for _, op := range []string{"/verify", "/settle"} {
			resp, err := http.Post(srv.URL+op, "application/json", strings.NewReader(tc.body))
			if err != nil {
				t.Fatal(err)
			}
			var p problem.Details
			err = json.NewDecoder(resp.Body).Decode(&p)
			resp.Body.Close()
			if err != nil {
				t.Fatalf("%s %s: %v", tc.name, op, err)
			}
			if resp.StatusCode != http.StatusBadRequest || p.Code != problem.CodeInvalidRequest {
				t.Errorf("%s %s: %d %s, want 400 %s", tc.name, op, resp.StatusCode, p.Code, problem.CodeInvalidRequest)
			}
			if diff := cmp.Diff([]problem.FieldError{tc.want}, p.Errors); diff != "" {
				t.Errorf("%s %s: field errors (-want +got):\n%s", tc.name, op, diff)
			}
		}
	}
	if n := f.asked.Load(); n != 0 {
		t.Errorf("the facilitator was asked %d times; want never", n)
	}
}

// askedFacilitator counts the verifies and settles it relays.
type askedFacilitator struct {
	x402.Facilitator
	asked atomic.Int64
}

func (f *askedFacilitator) Verify(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.VerifyResponse, error) {
	f.asked.Add(1)
	return f.Facilitator.Verify(ctx, p, r)
}

func (f *askedFacilitator) Settle(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.SettleResponse, error) {
	f.asked.Add(1)
	return f.Facilitator.Settle(ctx, p, r)
}
