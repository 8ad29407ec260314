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

// The evidence a version 3 or fact-check problem carries (extra: runs and
// consensus), which a trust service counts as votes, is held to the
// contract of the answer's: a 409 disagreement whose runs carry a label
// the operation does not give, or a confidence outside [0, 1], is refused
// as malformed, naming what is wrong, rather than returned as the
// router's *Error. A problem with evidence within the contract, or with
// none, is returned as it came.
func TestClient_refusesProblemEvidenceOutsideTheContract(t *testing.T) {
	const good = `{"runs":[{"replica":0,"session_id":1,"task_id":"a","label":"VALID","confidence":0.9,"latency_ms":1},` +
		`{"replica":1,"session_id":2,"task_id":"b","label":"INVALID","confidence":0.8,"latency_ms":1}],` +
		`"consensus":{"replicas":2,"agreement":0.5,"verdicts":["VALID","INVALID"],"strategy":"majority","confidence":0.5}}`
	for _, tc := range []struct {
		name  string
		extra string
		want  string // "" for the router's *Error
	}{
		{"within the contract", good, ""},
		{"no evidence", "", ""},
		{"a run's label unknown", strings.Replace(good, `"label":"INVALID"`, `"label":"BANANA"`, 1), `label "BANANA"`},
		{"a verdict unknown", strings.Replace(good, `"verdicts":["VALID","INVALID"]`, `"verdicts":["VALID","OK"]`, 1), `"OK" is not a label`},
		{"a confidence above 1", strings.Replace(good, `"confidence":0.9`, `"confidence":9`, 1), "confidence 9"},
		{"a label given twice", strings.Replace(good, `"label":"INVALID"`, `"label":"INVALID","label":"VALID"`, 1), "label"},
		{"not an object", `"replicas disagree"`, "extra"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := `{"title":"Conflict","status":409,"code":"disagreement","detail":"replicas disagree"`
			if tc.extra != "" {
				body += `,"extra":` + tc.extra
			}
			body += "}"
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/problem+json")
				w.WriteHeader(http.StatusConflict)
				w.Write([]byte(body))
			}))
			defer srv.Close()
			req := &router.ValidateV3Request{Consensus: router.ConsensusRequest{Replicas: 2}}
			req.Claim = router.Claim{Type: "math", Output: json.RawMessage(`"2 * 3 = 6"`)}
			_, err := newTestClient(t, srv.URL).ValidateV3(t.Context(), req)
			var p *router.Error
			switch {
			case tc.want == "" && (!errors.As(err, &p) || p.Status != http.StatusConflict || errors.Is(err, router.ErrMalformedResponse)):
				t.Errorf("error %v, want the router's 409 *Error", err)
			case tc.want != "" && (!errors.Is(err, router.ErrMalformedResponse) || errors.As(err, &p) || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want ErrMalformedResponse naming %q, and no *Error", err, tc.want)
			}
		})
	}
}
