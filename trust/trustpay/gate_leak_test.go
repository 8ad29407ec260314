package trustpay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/trustpay"
	"github.com/vouchkit/vouch/x402"
)

// unreachable is a trust.Caller whose every call fails as a trust.Client
// fails when the seller's trust service is down: its error names the
// service's internal address.
type unreachable struct{}

const internalAddr = "http://10.1.2.3:8081/api/v4/trust"

func (unreachable) Call(context.Context, *trust.Request) (*trust.Response, error) {
	return nil, errors.New(`trust: Post "` + internalAddr + `": dial tcp 10.1.2.3:8081: connect: connection refused`)
}

// TestGate_validatorErrorNotReturned: a validation that cannot run
// refuses the answer with 503 unavailable and a fixed message; the
// validator's error, which names the trust service's internal address,
// goes to the Route's logger and never to the buyer.
func TestGate_validatorErrorNotReturned(t *testing.T) {
	var logged bytes.Buffer
	gate := trustpay.Gate(trustpay.Route{Caller: unreachable{}, Type: "summary", Logger: slog.New(slog.NewTextHandler(&logged, nil))})
	req := httptest.NewRequest(http.MethodPost, "/summarize", strings.NewReader(`"a text"`))
	d := gate.Check(t.Context(), req, []byte(`"a text"`), &x402.BufferedResponse{Status: http.StatusOK, Body: []byte(`"a summary"`)})
	if d.Deliver {
		t.Fatal("the answer was delivered without a validation")
	}
	if d.Refusal.Status != http.StatusServiceUnavailable || d.Header.Get(trustpay.HeaderStatus) != trustpay.StatusError {
		t.Errorf("refusal %d, %s %q; want 503, %s", d.Refusal.Status, trustpay.HeaderStatus, d.Header.Get(trustpay.HeaderStatus), trustpay.StatusError)
	}
	var p problem.Details
	if err := json.Unmarshal(d.Refusal.Body, &p); err != nil {
		t.Fatalf("refusal body %s: %v", d.Refusal.Body, err)
	}
	if p.Code != problem.CodeUnavailable {
		t.Errorf("code %q, want %q", p.Code, problem.CodeUnavailable)
	}
	if strings.Contains(string(d.Refusal.Body), "10.1.2.3") {
		t.Errorf("the buyer's refusal names the trust service: %s", d.Refusal.Body)
	}
	if !strings.Contains(logged.String(), internalAddr) {
		t.Errorf("the log does not hold the validator's error; it holds %q", logged.String())
	}
}
