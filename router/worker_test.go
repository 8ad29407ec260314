package router_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/internal/jsonbody"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

// TestEngine_ValidateV3_liftsTaskContext checks that the task_input,
// task_spec and dispute_context members of a validate request's context
// reach the worker as the job's typed members, whether the request was
// built in process or decoded from the wire, and that the request's own
// context map is left alone.
func TestEngine_ValidateV3_liftsTaskContext(t *testing.T) {
	in, err := router.NewObjectInput(map[string]any{"text": "Refunds within 30 days."})
	if err != nil {
		t.Fatal(err)
	}
	inProcess := map[string]any{
		"task_input":      in,
		"task_spec":       json.RawMessage(`"keep every figure"`),
		"dispute_context": json.RawMessage(`{"buyer":"the 30 days are missing"}`),
		"market":          "m1",
	}
	var wire router.ValidateV3Request
	body := `{"claim":{"type":"summary","output":"Refunds accepted."},"consensus":{"replicas":1},
		"context":{"task_input":{"text":"Refunds within 30 days."},"task_spec":"keep every figure",
		"dispute_context":{"buyer":"the 30 days are missing"},"market":"m1"}}`
	if err := jsonbody.Unmarshal([]byte(body), &wire); err != nil {
		t.Fatal(err)
	}
	for name, ctxMap := range map[string]map[string]any{"in process": inProcess, "from the wire": wire.Context} {
		t.Run(name, func(t *testing.T) {
			rec := routertest.NewRecorder(routertest.Verdict(router.VerdictValid))
			e := one(t, rec)
			req := &router.ValidateV3Request{
				ValidateTask: router.ValidateTask{
					Claim:   router.Claim{Type: "summary", Output: json.RawMessage(`"Refunds accepted."`)},
					Context: ctxMap,
				},
				Consensus: router.ConsensusRequest{Replicas: 1},
			}
			if _, err := e.ValidateV3(context.Background(), req); err != nil {
				t.Fatalf("ValidateV3: %v", err)
			}
			jobs := rec.Jobs()
			if len(jobs) != 1 {
				t.Fatalf("worker got %d jobs, want 1", len(jobs))
			}
			j := jobs[0]
			if got := string(j.TaskInput.Raw()); got != `{"text":"Refunds within 30 days."}` {
				t.Errorf("TaskInput = %s", got)
			}
			if got := string(j.TaskSpec); got != `"keep every figure"` {
				t.Errorf("TaskSpec = %s", got)
			}
			if got := string(j.DisputeContext); got != `{"buyer":"the 30 days are missing"}` {
				t.Errorf("DisputeContext = %s", got)
			}
			if diff := cmp.Diff(map[string]any{"market": "m1"}, j.Context); diff != "" {
				t.Errorf("job context keeps lifted members (-want +got):\n%s", diff)
			}
			if len(ctxMap) != 4 {
				t.Errorf("the request's context map was modified: %v", ctxMap)
			}
		})
	}
}

// TestEngine_ValidateV3_refusesUndecodableTaskInput checks that a
// task_input that is not an input (a number), built in process, is
// refused naming context.task_input before any work, rather than left in
// the context where a worker reading the job's TaskInput finds none.
func TestEngine_ValidateV3_refusesUndecodableTaskInput(t *testing.T) {
	rec := routertest.NewRecorder(routertest.Verdict(router.VerdictValid))
	e := one(t, rec)
	_, err := e.ValidateV3(context.Background(), &router.ValidateV3Request{
		ValidateTask: router.ValidateTask{
			Claim:   router.Claim{Type: "summary", Output: json.RawMessage(`"x"`)},
			Context: map[string]any{"task_input": 42.0},
		},
		Consensus: router.ConsensusRequest{Replicas: 1},
	})
	var p *router.Error
	if !errors.As(err, &p) || p.Status != 400 || len(p.Errors) != 1 || p.Errors[0].Field != "context.task_input" || p.Errors[0].Rule != "type" {
		t.Errorf("ValidateV3 = %v, want a 400 naming context.task_input, rule type", err)
	}
	if n := rec.Calls.Load(); n != 0 {
		t.Errorf("a refused request ran %d jobs", n)
	}
}

// TestHTTPWorker_carriesTaskMembers checks that the typed task members
// cross the worker wire.
func TestHTTPWorker_carriesTaskMembers(t *testing.T) {
	var got *router.Job
	srv := httptest.NewServer(router.NewWorkerHandler(router.WorkerFunc(func(_ context.Context, job *router.Job) (*router.Result, error) {
		got = job
		return &router.Result{Verdict: router.VerdictValid}, nil
	})))
	defer srv.Close()
	job := sampleJob(t)
	job.TaskInput = router.NewStringInput("Refunds within 30 days.")
	job.TaskSpec = json.RawMessage(`"keep every figure"`)
	job.DisputeContext = json.RawMessage(`{"buyer":"b"}`)
	if _, err := router.HTTPWorker(srv.URL).Work(context.Background(), job); err != nil {
		t.Fatal(err)
	}
	if s, _ := got.TaskInput.String(); s != "Refunds within 30 days." || string(got.TaskSpec) != `"keep every figure"` || string(got.DisputeContext) != `{"buyer":"b"}` {
		t.Errorf("remote worker got task_input %s, task_spec %s, dispute_context %s", got.TaskInput.Raw(), got.TaskSpec, got.DisputeContext)
	}
}
