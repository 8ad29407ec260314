package chatworker_test

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/router"
)

// TestEngine_ValidateV2_judgeSeesTheTask: the task a claim answers, which
// a caller (the trust service) puts in the context as task_input,
// task_spec and dispute_context and the engine moves into the job's
// TaskInput, TaskSpec and DisputeContext, reaches the judge's prompt with
// the rest of the context; a judge asked whether a result completes a
// task as its spec states cannot answer without them.
func TestEngine_ValidateV2_judgeSeesTheTask(t *testing.T) {
	f := newFake(t, content(`{"verdict":"VALID","confidence":0.9,"reasons":["42 is 6 times 7"]}`))
	e, err := router.NewEngine([]router.Session{{ID: 1, Worker: newWorker(t, f, nil)}})
	if err != nil {
		t.Fatal(err)
	}
	req := &router.ValidateV2Request{SessionID: 1, ValidateTask: router.ValidateTask{
		Claim: router.Claim{Type: "result", Description: "Does the claimed result correctly complete the task, as its spec states?",
			Output: json.RawMessage(`"42"`)},
		Context: map[string]any{
			"task_input":      "What is 6 times 7?",
			"task_spec":       "a whole number in decimal digits",
			"dispute_context": map[string]any{"buyer": "the answer is wrong"},
			"audience":        "children",
		},
	}}
	if _, err := e.ValidateV2(t.Context(), req); err != nil {
		t.Fatalf("ValidateV2: %v", err)
	}
	reqs := f.reqs()
	if len(reqs) != 1 {
		t.Fatalf("the endpoint got %d requests, want 1", len(reqs))
	}
	user := reqs[0].Messages[len(reqs[0].Messages)-1].Content
	type seen struct{ Input, Spec, Dispute, Context bool }
	got := seen{
		Input:   strings.Contains(user, "What is 6 times 7?"),
		Spec:    strings.Contains(user, "a whole number in decimal digits"),
		Dispute: strings.Contains(user, "the answer is wrong"),
		Context: strings.Contains(user, `"audience": "children"`),
	}
	if diff := cmp.Diff(seen{true, true, true, true}, got); diff != "" {
		t.Errorf("what the judge's prompt holds (-want +got):\n%s\nprompt:\n%s", diff, user)
	}
}
