package router_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/router"
)

// An answer or a problem's evidence whose consensus block or runs speak
// of other replicas than the call ran (five for a call of three, or one
// verdict per replica that its run does not carry) is refused as
// malformed: a trust service over the Client would otherwise copy the
// block into a receipt that states five unanimous replicas beside a
// decision over three.
func TestClient_refusesAnswersOfOtherReplicas(t *testing.T) {
	validate := func(ctx context.Context, s router.Service) (any, error) {
		req := &router.ValidateV3Request{Consensus: router.ConsensusRequest{Replicas: 3}}
		req.Claim = router.Claim{Type: "math", Output: json.RawMessage(`"2 * 3 = 6"`)}
		return s.ValidateV3(ctx, req)
	}
	factcheckV1 := func(ctx context.Context, s router.Service) (any, error) {
		return s.FactcheckV1(ctx, &router.FactcheckV1Request{Claim: "2 * 3 = 6"})
	}
	validateV2 := func(ctx context.Context, s router.Service) (any, error) {
		req := &router.ValidateV2Request{SessionID: 1}
		req.Claim = router.Claim{Type: "math", Output: json.RawMessage(`"2 * 3 = 6"`)}
		return s.ValidateV2(ctx, req)
	}
	block := func(m map[string]any) map[string]any { return m["consensus"].(map[string]any) }
	run := func(m map[string]any, i int) map[string]any {
		return m["evidence"].(map[string]any)["runs"].([]any)[i].(map[string]any)
	}
	five := []string{"TRUE", "TRUE", "TRUE", "TRUE", "TRUE"}
	for _, tc := range []struct {
		name  string
		call  func(context.Context, router.Service) (any, error)
		alter func(m map[string]any)
		want  string // "" for an answer within the contract
	}{
		{"as answered", validate, func(map[string]any) {}, ""},
		{"five replicas for a call of three", validate, func(m map[string]any) {
			block(m)["replicas"] = 5
			block(m)["verdicts"] = []string{"VALID", "VALID", "VALID", "VALID", "VALID"}
		}, "consensus: replicas 5 with 5 verdicts, for a call of 3 replicas"},
		{"five verdicts for three replicas", validate, func(m map[string]any) {
			block(m)["verdicts"] = []string{"VALID", "VALID", "VALID", "VALID", "VALID"}
		}, "consensus: replicas 3 with 5 verdicts"},
		{"no replicas, a run at 7", validate, func(m map[string]any) {
			block(m)["replicas"] = 0
			run(m, 2)["replica"] = 7
		}, "consensus: replicas 0 with 3 verdicts, for a call of 3 replicas"},
		{"a run labelled other than its verdict", validate, func(m map[string]any) { run(m, 1)["label"] = "INVALID" },
			`evidence.runs[1]: label "INVALID" is not consensus.verdicts[1], "VALID"`},
		{"version 1 fact check as answered", factcheckV1, func(map[string]any) {}, ""},
		{"version 1 fact check of five", factcheckV1, func(m map[string]any) {
			block(m)["replicas"] = 5
			block(m)["verdicts"] = five
		}, "consensus: replicas 5 with 5 verdicts, for a call of 3 replicas"},
		{"version 2 as answered", validateV2, func(map[string]any) {}, ""},
		{"version 2 run of another replica", validateV2, func(m map[string]any) { run(m, 0)["replica"] = 2 },
			"evidence.runs[0]: replica 2 is outside the call's 1"},
	} {
		t.Run(tc.name, func(t *testing.T) { checkAltered(t, tc.call, tc.alter, tc.want) })
	}
}

// The evidence of a problem is held to the replicas of the call too: a
// 409 disagreement whose block counts five replicas for a call of three
// is refused as malformed, not passed on as the *Error whose runs a trust
// service counts.
func TestClient_refusesProblemEvidenceOfOtherReplicas(t *testing.T) {
	runs := `[{"replica":0,"session_id":1,"task_id":"a","label":"VALID","latency_ms":1},` +
		`{"replica":1,"session_id":2,"task_id":"b","label":"INVALID","latency_ms":1},` +
		`{"replica":2,"session_id":3,"task_id":"c","label":"VALID","latency_ms":1}]`
	for _, tc := range []struct {
		name, block, want string
	}{
		{"as answered", `{"replicas":3,"agreement":0.67,"verdicts":["VALID","INVALID","VALID"],"strategy":"majority","confidence":0.69}`, ""},
		{"five replicas for a call of three", `{"replicas":5,"agreement":0.8,"verdicts":["VALID","INVALID","VALID","VALID","VALID"],"strategy":"majority","confidence":0.89}`,
			"consensus: replicas 5 with 5 verdicts, for a call of 3 replicas"},
		{"a verdict its run does not carry", `{"replicas":3,"agreement":1,"verdicts":["VALID","VALID","VALID"],"strategy":"majority","confidence":0.94}`,
			`evidence.runs[1]: label "INVALID" is not consensus.verdicts[1], "VALID"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			body := `{"type":"urn:vouch:problem:disagreement","title":"Conflict","status":409,"code":"disagreement",` +
				`"detail":"replicas disagree","extra":{"runs":` + runs + `,"consensus":` + tc.block + `}}`
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Content-Type", "application/problem+json")
				w.WriteHeader(http.StatusConflict)
				w.Write([]byte(body))
			}))
			defer srv.Close()
			req := &router.ValidateV3Request{Consensus: router.ConsensusRequest{Replicas: 3, DisagreementPolicy: router.DisagreeFailHard}}
			req.Claim = router.Claim{Type: "math", Output: json.RawMessage(`"2 * 3 = 6"`)}
			_, err := newTestClient(t, srv.URL).ValidateV3(t.Context(), req)
			var p *router.Error
			switch {
			case tc.want == "" && (!errors.As(err, &p) || p.Status != http.StatusConflict):
				t.Errorf("error %v, want the 409 *Error", err)
			case tc.want != "" && (!errors.Is(err, router.ErrMalformedResponse) || !strings.Contains(err.Error(), tc.want)):
				t.Errorf("error %v, want ErrMalformedResponse naming %q", err, tc.want)
			}
		})
	}
}
