package trusta2a_test

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/trust/trusta2a"
)

// A 1.0 request whose params are not an object is invalid params whose
// BadRequest names params, as version 0.3 names them.
func TestV1_paramsNotAnObject(t *testing.T) {
	f := newFixture(t, trusta2a.Config{})
	for _, c := range []struct{ method, params, kind string }{
		{"SendMessage", `"x"`, "string"},
		{"GetTask", `["t1"]`, "array"},
		{"CancelTask", `7`, "number"},
		{"ListTasks", `true`, "bool"},
	} {
		_, rerr := f.call1(t, "demo-key", "1.0", c.method, c.params)
		desc := "expected an object, got " + c.kind
		want := &rpcError{Code: -32602, Message: "Invalid parameters: params: " + desc, Data: []any{map[string]any{
			"@type":           "type.googleapis.com/google.rpc.BadRequest",
			"fieldViolations": []any{map[string]any{"field": "params", "description": desc}},
		}}}
		if diff := cmp.Diff(want, rerr); diff != "" {
			t.Errorf("%s with params %s (-want +got):\n%s", c.method, c.params, diff)
		}
	}
}
