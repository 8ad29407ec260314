package trust_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// A verify_receipt answer that contradicts itself (valid beside a failed
// check, not valid with every check passed, as_issued with no passed
// signature check, a check of an unknown status) is refused as malformed,
// naming what is wrong, rather than handed to a caller that would trust
// a receipt on it.
func TestClient_refusesVerifyAnswerThatContradictsItself(t *testing.T) {
	const ok = `{"valid":true,"as_issued":true,"receipt_id":"rcpt_x","checks":[` +
		`{"name":"schema","status":"passed"},{"name":"signature","status":"passed"},{"name":"expiry","status":"skipped"}]}`
	for _, tc := range []struct{ body, want string }{
		{ok, ""},
		{strings.Replace(ok, `"valid":true,"as_issued":true`, `"valid":false,"as_issued":false`, 1), "valid is false"},
		{strings.Replace(ok, `{"name":"expiry","status":"skipped"}`, `{"name":"expiry","status":"failed","code":"expired"}`, 1), "valid is true"},
		{strings.Replace(ok, `{"name":"signature","status":"passed"}`, `{"name":"signature","status":"skipped"}`, 1), "as_issued is true"},
		{strings.Replace(ok, `"status":"skipped"`, `"status":"maybe"`, 1), `checks[2].status "maybe"`},
		{strings.Replace(strings.Replace(ok, `"valid":true`, `"valid":false`, 1), `{"name":"signature","status":"passed"}`, `{"name":"signature","status":"failed","code":"bad_signature"}`, 1), "as_issued is true"},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(tc.body))
		}))
		_, err := newClient(t, srv.URL).VerifyReceipt(t.Context(), &receipt.VerifyRequest{Receipt: []byte(`{}`)})
		srv.Close()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("an answer that agrees with itself: %v", err)
		case tc.want != "" && (!errors.Is(err, router.ErrMalformedResponse) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want ErrMalformedResponse naming %q", tc.body, err, tc.want)
		}
	}
}

// An answer with no receipt to a call that asked for one is refused as
// malformed: the service issues a receipt with every answer that asked,
// or fails the call, so a caller never takes an unreceipted answer for
// a receipted one.
func TestClient_refusesAnswerWithoutTheReceiptAskedFor(t *testing.T) {
	const body = `{"status":"VALID","confidence":0.9,"trace_id":"t","evidence":{"agreement":1,"launched":1,"answered":1,"verdicts":["VALID"]}}`
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.Write([]byte(body))
	}))
	defer srv.Close()
	for _, tc := range []struct {
		ask  receipt.Request
		want string
	}{
		{receipt.Request{}, ""},
		{receipt.Inline(), "receipt: absent"},
		{receipt.Request{Mode: receipt.DeliveryDetached}, "receipt: absent"},
	} {
		_, err := newClient(t, srv.URL).Call(t.Context(), &trust.Request{Mode: trust.ModeValidation, Policy: trust.PolicyFast,
			Receipt: tc.ask, Task: trust.Task{Type: "t", ClaimedResult: trust.JSON("x")}})
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("no receipt asked for: %v", err)
		case tc.want != "" && (!errors.Is(err, router.ErrMalformedResponse) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("receipt %q asked for: error %v, want ErrMalformedResponse naming %q", tc.ask.Mode, err, tc.want)
		}
	}
}
