package router_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/vouchkit/vouch/router"
)

// A version 1 or 2 validation's answer that breaks the contract (a verdict
// validate does not give, a confidence outside [0, 1], a run whose label
// or numbers are out of bounds) is refused as malformed, naming what is
// wrong, as a version 3 answer is: a trust service reads it as a vote.
func TestClient_refusesVersion2AnswersOutsideTheContract(t *testing.T) {
	v1 := func(ctx context.Context, s router.Service) (any, error) {
		return s.ValidateV1(ctx, &router.ValidateV1Request{SessionID: 1, TaskRequestInput: "What is 2 * 3?", TaskResultOutput: "6"})
	}
	v2 := func(ctx context.Context, s router.Service) (any, error) {
		req := &router.ValidateV2Request{SessionID: 1}
		req.Claim = router.Claim{Type: "math", Output: json.RawMessage(`"2 * 3 = 6"`)}
		return s.ValidateV2(ctx, req)
	}
	v2of3 := func(ctx context.Context, s router.Service) (any, error) {
		req := &router.ValidateV2Request{SessionID: 1}
		req.Claim = router.Claim{Type: "math", Output: json.RawMessage(`"2 * 3 = 6"`)}
		req.Policy.Redundancy = 3
		return s.ValidateV2(ctx, req)
	}
	run := func(m map[string]any, i int) map[string]any {
		return m["evidence"].(map[string]any)["runs"].([]any)[i].(map[string]any)
	}
	for _, tc := range []struct {
		name  string
		call  func(context.Context, router.Service) (any, error)
		alter func(m map[string]any)
		want  string // "" for an answer within the contract
	}{
		{"v1 as answered", v1, func(map[string]any) {}, ""},
		{"v1 verdict unknown", v1, func(m map[string]any) { m["verdict"] = "BANANA" }, `verdict "BANANA"`},
		{"v1 verdict empty", v1, func(m map[string]any) { m["verdict"] = "" }, `verdict ""`},
		{"v1 verdict of a fact check", v1, func(m map[string]any) { m["verdict"] = "TRUE" }, `verdict "TRUE"`},
		{"v1 confidence above 1", v1, func(m map[string]any) { m["confidence"] = 7 }, "confidence 7"},
		{"v2 as answered", v2, func(map[string]any) {}, ""},
		{"v2 verdict unknown", v2, func(m map[string]any) { m["verdict"] = "BANANA" }, `verdict "BANANA"`},
		{"v2 confidence above 1", v2, func(m map[string]any) { m["confidence"] = 7 }, "confidence 7"},
		{"v2 negative confidence", v2, func(m map[string]any) { m["confidence"] = -0.1 }, "confidence -0.1"},
		{"v2 run's label unknown", v2, func(m map[string]any) { run(m, 0)["label"] = "MAYBE" }, `evidence.runs[0]: label "MAYBE"`},
		{"v2 run's confidence above 1", v2, func(m map[string]any) { run(m, 0)["confidence"] = 3 }, "evidence.runs[0]: confidence 3"},
		{"v2 of three as answered", v2of3, func(map[string]any) {}, ""},
		{"v2 of three without a winner", v2of3, func(m map[string]any) { m["verdict"], m["confidence"] = "", 0 }, ""},
		{"v2 of three with a replica twice", v2of3, func(m map[string]any) { run(m, 2)["replica"] = 0 }, "evidence.runs[2]: replica 0"},
	} {
		t.Run(tc.name, func(t *testing.T) { checkAltered(t, tc.call, tc.alter, tc.want) })
	}
}
