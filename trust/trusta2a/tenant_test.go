package trusta2a_test

import (
	"testing"

	"github.com/vouchkit/vouch/trust/trusta2a"
)

// TestV1Tenant: the agent's interfaces name no tenant, so every method
// of 1.0 refuses a request that names one as invalid params naming
// tenant, as SendMessage does, rather than answering as if it named
// none.
func TestV1Tenant(t *testing.T) {
	f := newFixture(t, trusta2a.Config{})
	task := f.send1(t, "demo-key", `[{"data":{"claimed_result":"51","input":"What is 17 * 3?"}}]`)
	for _, tt := range []struct{ method, params string }{
		{"SendMessage", `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"x"}]},"tenant":"t"}`},
		{"GetTask", `{"id":"` + task.ID + `","tenant":"t"}`},
		{"CancelTask", `{"id":"` + task.ID + `","tenant":"t"}`},
		{"ListTasks", `{"tenant":"t"}`},
	} {
		res, rerr := f.call1(t, "demo-key", "1.0", tt.method, tt.params)
		if rerr == nil || rerr.Code != -32602 {
			t.Errorf("%s %s: %s %+v, want invalid params", tt.method, tt.params, res, rerr)
			continue
		}
		var field any
		if d := rerr.details(); len(d) == 1 {
			if fv, _ := d[0]["fieldViolations"].([]any); len(fv) == 1 {
				field = fv[0].(map[string]any)["field"]
			}
		}
		if field != "tenant" {
			t.Errorf("%s: %+v, want a BadRequest naming tenant", tt.method, rerr)
		}
	}
}
