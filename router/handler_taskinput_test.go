package router_test

import (
	"io"
	"net/http"
	"strings"
	"testing"
)

// TestHandler_taskInput sends validate requests whose context.task_input
// is not an input over loopback: each is refused with a 400 naming
// context.task_input before any work, where it ran with a job that had
// no task input. An input in each of its forms reaches the worker as the
// job's TaskInput.
func TestHandler_taskInput(t *testing.T) {
	srv, rec := newKeyedHandler(t)
	claim := `"claim":{"type":"summary","output":"x"}`
	for path, extra := range map[string]string{"/api/v2/validate": "", "/api/v3/validate": `,"consensus":{"replicas":1}`} {
		for _, in := range []string{`5`, `[1]`, `true`, `{"kind":"array"}`, `{"kind":"array","items":"a"}`} {
			sendBad(t, srv, badInputCase{
				name: path + " task_input " + in, path: path,
				body:   `{"session_id":1,` + claim + extra + `,"context":{"task_input":` + in + `}}`,
				status: 400, code: "invalid_request", field: "context.task_input",
			})
		}
	}
	if n := rec.Calls.Load(); n != 0 {
		t.Fatalf("task inputs that are no input ran %d jobs", n)
	}

	for _, in := range []string{`"text"`, `{"text":"a"}`, `{"kind":"array","items":[1]}`} {
		body := `{"session_id":1,` + claim + `,"context":{"task_input":` + in + `}}`
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/api/v2/validate", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer k")
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		raw, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			t.Errorf("task_input %s: status %d (%s), want 200", in, resp.StatusCode, raw)
			continue
		}
		jobs := rec.Jobs()
		if got := jobs[len(jobs)-1].TaskInput; !jsonEqual(got.Raw(), []byte(in)) {
			t.Errorf("task_input %s: the worker got %s", in, got.Raw())
		}
	}
}
