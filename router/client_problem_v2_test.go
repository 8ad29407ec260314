package router_test

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/router"
)

// A version 2 validation with policy.redundancy 3 or 5 runs as a version 3
// best_effort call, and its 502, 504 or 409 carries the same evidence in
// extra; a version 1 or 2 validation on one session carries its run. That
// evidence is held to the contract as a version 3 problem's is.
func TestClient_refusesValidationV2ProblemEvidenceOutsideTheContract(t *testing.T) {
	const good = `{"runs":[{"replica":0,"session_id":1,"task_id":"a","label":"ERROR","confidence":0,"latency_ms":1,"error":"boom"},` +
		`{"replica":1,"session_id":2,"task_id":"b","label":"TIMEOUT","confidence":0,"latency_ms":1},` +
		`{"replica":2,"session_id":3,"task_id":"c","label":"ERROR","confidence":0,"latency_ms":1,"error":"boom"}],` +
		`"consensus":{"replicas":3,"agreement":0,"verdicts":["ERROR","TIMEOUT","ERROR"],"strategy":"majority","confidence":0}}`
	for _, tc := range []struct {
		name  string
		v1    bool
		extra string
		want  string // "" for the router's *Error
	}{
		{"within the contract", false, good, ""},
		{"a run's label unknown", false, strings.Replace(good, `"label":"TIMEOUT"`, `"label":"BANANA"`, 1), `label "BANANA"`},
		{"a verdict unknown", false, strings.Replace(good, `"verdicts":["ERROR","TIMEOUT","ERROR"]`, `"verdicts":["ERROR","OK","ERROR"]`, 1), `"OK" is not a label`},
		{"a confidence above 1", false, strings.Replace(good, `"confidence":0,"latency_ms":1,"error"`, `"confidence":9,"latency_ms":1,"error"`, 1), "confidence 9"},
		{"not an object", false, `"no replica answered"`, "extra"},
		{"version 1 within the contract", true, `{"runs":[{"replica":0,"session_id":1,"task_id":"a","label":"ERROR","confidence":0,"latency_ms":1}]}`, ""},
		{"version 1 a run's label unknown", true, `{"runs":[{"replica":0,"session_id":1,"task_id":"a","label":"OK","confidence":0,"latency_ms":1}]}`, `label "OK"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := badGatewayClient(t, "no replica answered", tc.extra)
			var err error
			if tc.v1 {
				_, err = c.ValidateV1(t.Context(), &router.ValidateV1Request{SessionID: 1, TaskRequestInput: "2 * 3", TaskResultOutput: "6"})
			} else {
				req := &router.ValidateV2Request{SessionID: 1}
				req.Policy.Redundancy = router.Replicas3
				req.Claim = router.Claim{Type: "math", Output: json.RawMessage(`"2 * 3 = 6"`)}
				_, err = c.ValidateV2(t.Context(), req)
			}
			checkBadGateway(t, err, tc.want)
		})
	}
}

// badGatewayClient returns a Client of a router that answers every call
// 502 all_replicas_failed with detail and the evidence extra.
func badGatewayClient(t *testing.T, detail, extra string) *router.Client {
	t.Helper()
	body := `{"title":"Bad Gateway","status":502,"code":"all_replicas_failed","detail":"` + detail + `","extra":` + extra + "}"
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/problem+json")
		w.WriteHeader(http.StatusBadGateway)
		w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return newTestClient(t, srv.URL)
}

// checkBadGateway checks err, the error of a call badGatewayClient
// answered: the router's 502 *Error when want is empty, otherwise an
// error wrapping ErrMalformedResponse that names want, and no *Error.
func checkBadGateway(t *testing.T, err error, want string) {
	t.Helper()
	var p *router.Error
	switch {
	case want == "" && (!errors.As(err, &p) || p.Status != http.StatusBadGateway || errors.Is(err, router.ErrMalformedResponse)):
		t.Errorf("error %v, want the router's 502 *Error", err)
	case want != "" && (!errors.Is(err, router.ErrMalformedResponse) || errors.As(err, &p) || !strings.Contains(err.Error(), want)):
		t.Errorf("error %v, want ErrMalformedResponse naming %q, and no *Error", err, want)
	}
}
