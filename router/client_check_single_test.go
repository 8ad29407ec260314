package router_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/vouchkit/vouch/router"
)

// A version 2 validation run on one session always answers with that
// run's verdict: an answer of such a call with no verdict, or with a
// verdict its run does not carry, is refused as malformed rather than
// read as a call no replica won (a trust service over the Client then
// took the run's VALID as the verdict the router never stated). A call
// of three replicas may still answer without a winner.
func TestClient_refusesSingleSessionAnswerWithoutItsVerdict(t *testing.T) {
	single := func(ctx context.Context, s router.Service) (any, error) {
		req := &router.ValidateV2Request{SessionID: 1}
		req.Claim = router.Claim{Type: "math", Output: json.RawMessage(`"2 * 3 = 6"`)}
		return s.ValidateV2(ctx, req)
	}
	three := func(ctx context.Context, s router.Service) (any, error) {
		req := &router.ValidateV2Request{SessionID: 1, ValidateTask: router.ValidateTask{Policy: router.ValidatePolicy{Redundancy: 3}}}
		req.Claim = router.Claim{Type: "math", Output: json.RawMessage(`"2 * 3 = 6"`)}
		return s.ValidateV2(ctx, req)
	}
	run := func(m map[string]any) map[string]any {
		return m["evidence"].(map[string]any)["runs"].([]any)[0].(map[string]any)
	}
	for _, tc := range []struct {
		name  string
		call  func(context.Context, router.Service) (any, error)
		alter func(m map[string]any)
		want  string // "" for an answer within the contract
	}{
		{"as answered", single, func(map[string]any) {}, ""},
		{"no verdict", single, func(m map[string]any) { m["verdict"] = "" }, `verdict "" is not a verdict of validate`},
		{"a verdict its run does not carry", single, func(m map[string]any) { run(m)["label"] = "INVALID" },
			`evidence.runs[0]: label "INVALID" is not the verdict "VALID" of the call's one run`},
		{"three replicas without a winner", three, func(m map[string]any) { m["verdict"], m["confidence"] = "", 0 }, ""},
	} {
		t.Run(tc.name, func(t *testing.T) { checkAltered(t, tc.call, tc.alter, tc.want) })
	}
}
