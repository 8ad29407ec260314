package trust_test

import (
	"net/http"
	"testing"
	"time"

	"github.com/vouchkit/vouch/trust"
)

// TestHandler_delegationSpec sends delegations with a task.spec over
// loopback. A string reaches the workers as the objective; any other
// spec, which a delegation has no way to hand on, is refused with a 400
// naming task.spec before any work, where it was dropped and the call
// ran on an objective made from the type.
func TestHandler_delegationSpec(t *testing.T) {
	s := newBadInputServer(t, time.Now)
	body := func(spec string) string {
		return `{"task":{"spec":` + spec + `,"type":"summary","input":"Paris is the capital of France."},"mode":"delegation","policy":"fast"}`
	}
	for _, spec := range []string{`{"max_words":3}`, `5`, `["one-sentence"]`, `true`} {
		status, ct, raw := s.do(t, http.MethodPost, trust.CallPath, "k", body(spec))
		checkProblem(t, "spec "+spec, status, ct, raw, http.StatusBadRequest, "invalid_request", "task.spec")
	}
	if n := s.workers.Calls.Load(); n != 0 {
		t.Fatalf("delegations with a spec that is no string ran %d jobs", n)
	}

	status, _, raw := s.do(t, http.MethodPost, trust.CallPath, "k", body(`"One-sentence-in-French."`))
	if status != http.StatusOK {
		t.Fatalf("string spec: status %d (%s), want 200", status, raw)
	}
	jobs := s.workers.Jobs()
	if len(jobs) == 0 {
		t.Fatal("string spec: no job ran")
	}
	for _, j := range jobs {
		if j.Objective != "One-sentence-in-French." {
			t.Errorf("string spec: job objective %q, want the spec", j.Objective)
		}
	}
}
