package trust_test

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// A trust service's answer whose numbers are out of their bounds is
// refused as malformed, naming the number, rather than handed to an agent
// that would act on a confidence of 1.5.
func TestClient_refusesNumbersOutOfBounds(t *testing.T) {
	const ok = `{"status":"VALID","confidence":0.9,"trace_id":"t","evidence":{"agreement":1,"launched":3,"answered":2,"cancelled":1,"failed":0,"verdicts":["VALID","CANCELLED","VALID"]}}`
	for _, tc := range []struct{ body, want string }{
		{ok, ""},
		{strings.Replace(ok, `"confidence":0.9`, `"confidence":1.5`, 1), "confidence 1.5"},
		{strings.Replace(ok, `"confidence":0.9`, `"confidence":-0.1`, 1), "confidence -0.1"},
		{strings.Replace(ok, `"agreement":1`, `"agreement":2`, 1), "evidence.agreement 2"},
		{strings.Replace(ok, `"failed":0`, `"failed":-1`, 1), "negative number of runs"},
		{strings.Replace(ok, `"launched":3`, `"launched":2`, 1), "of 2 launched"},
		{strings.Replace(ok, `"launched":3`, `"launched":3,"redundancy":-3`, 1), "negative number of runs"},
		{strings.Replace(ok, `"launched":3`, `"launched":3,"checked":-1`, 1), "negative number of runs"},
	} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(tc.body))
		}))
		_, err := newClient(t, srv.URL).Call(t.Context(), &trust.Request{Mode: trust.ModeValidation, Policy: trust.PolicySafe,
			Task: trust.Task{Type: "t", ClaimedResult: trust.JSON("x")}})
		srv.Close()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("an answer within bounds: %v", err)
		case tc.want != "" && (!errors.Is(err, router.ErrMalformedResponse) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s: error %v, want ErrMalformedResponse naming %q", tc.body, err, tc.want)
		}
	}
}

// A trust service's answer whose status is not one the call's mode
// answers (none at all, one the interface does not know, or an
// arbitration's for a validation) is refused as malformed, naming the
// status, rather than handed to an agent that would act on it.
func TestClient_refusesStatusOutsideMode(t *testing.T) {
	const ok = `{"status":"VALID","confidence":0.9,"trace_id":"t","evidence":{"agreement":1,"launched":1,"answered":1,"verdicts":["VALID"]}}`
	validation := &trust.Request{Mode: trust.ModeValidation, Policy: trust.PolicySafe,
		Task: trust.Task{Type: "t", ClaimedResult: trust.JSON("x")}}
	arbitration := &trust.Request{Mode: trust.ModeArbitration, Policy: trust.PolicySafe,
		Task: trust.Task{Type: "t", ClaimedResult: trust.JSON("x"), DisputeContext: trust.JSON("d")}}
	for _, tc := range []struct {
		req    *trust.Request
		status string
		want   string // "" for an answer
	}{
		{validation, "VALID", ""},
		{validation, "NEEDS_SPEC", ""},
		{arbitration, "SELLER_INVALID", ""},
		{arbitration, "INCONCLUSIVE", ""},
		{validation, "", `status ""`},
		{validation, "APPROVED", `status "APPROVED"`},
		{validation, "SELLER_VALID", `status "SELLER_VALID"`},
		{arbitration, "VALID", `status "VALID"`},
	} {
		body := strings.Replace(ok, `"status":"VALID"`, `"status":"`+tc.status+`"`, 1)
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Write([]byte(body))
		}))
		resp, err := newClient(t, srv.URL).Call(t.Context(), tc.req)
		srv.Close()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s answering %q: %v", tc.req.Mode, tc.status, err)
		case tc.want == "" && resp.Status != trust.Status(tc.status):
			t.Errorf("%s answering %q: status %q", tc.req.Mode, tc.status, resp.Status)
		case tc.want != "" && (!errors.Is(err, router.ErrMalformedResponse) || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%s answering %q: error %v, want ErrMalformedResponse naming %s", tc.req.Mode, tc.status, err, tc.want)
		}
	}
}
