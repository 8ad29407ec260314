package router

import (
	"bytes"
	"encoding/json"
	"testing"
)

// FuzzLiftTaskContext decodes an arbitrary context object as the Handler
// does and lifts its task members into a job: no input panics, the
// request's map is left whole, and every member either stays in the job's
// context or is lifted into its typed member as valid JSON.
func FuzzLiftTaskContext(f *testing.F) {
	f.Add([]byte(`{"task_input":{"text":"a"},"task_spec":"s","dispute_context":{"b":1},"market":"m"}`))
	f.Add([]byte(`{"task_input":"plain","task_spec":null}`))
	f.Add([]byte(`{"task_input":[1,2],"dispute_context":1e400}`))
	f.Add([]byte(`{"task_input":{"kind":"array","items":[]},"task_spec":{"schema":{}}}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var ctx map[string]any
		if dec.Decode(&ctx) != nil || ctx == nil {
			return
		}
		n := len(ctx)
		job := &Job{Kind: KindValidate, Context: ctx}
		job.liftTaskContext()
		if len(ctx) != n {
			t.Fatalf("the request's context changed from %d to %d members", n, len(ctx))
		}
		lifted := map[string]json.RawMessage{
			contextTaskInput: job.TaskInput.Raw(), contextTaskSpec: job.TaskSpec, contextDisputeContext: job.DisputeContext,
		}
		for k := range ctx {
			_, kept := job.Context[k]
			raw, isTask := lifted[k]
			switch {
			case kept && isTask && raw != nil:
				t.Fatalf("%s is both kept and lifted", k)
			case !kept && (!isTask || raw == nil):
				t.Fatalf("%s was dropped", k)
			case !kept && !json.Valid(raw):
				t.Fatalf("%s lifted as invalid JSON %q", k, raw)
			}
		}
	})
}
