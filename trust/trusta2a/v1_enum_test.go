package trusta2a_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/trust/trusta2a"
)

// violated returns the field a BadRequest of rerr names, or "".
func violated(rerr *rpcError) string {
	if rerr == nil {
		return ""
	}
	d := rerr.details()
	if len(d) != 1 || d[0]["@type"] != "type.googleapis.com/google.rpc.BadRequest" {
		return ""
	}
	fields, _ := d[0]["fieldViolations"].([]any)
	if len(fields) != 1 {
		return ""
	}
	field, _ := fields[0].(map[string]any)["field"].(string)
	return field
}

// An enum of 1.0 is read as ProtoJSON reads it, by its name or by its
// number (Role, and ListTasks' status, a TaskState), and written by its
// name; a number the enum does not define is invalid params naming the
// member.
func TestV1Enums_numbers(t *testing.T) {
	f := newFixture(t, trusta2a.Config{})
	const claim = `"parts":[{"data":{"claimed_result":"17 * 3 = 51","input":"What is 17 * 3?"}}]`
	for _, role := range []string{`1`, `1.0`, `"ROLE_USER"`} {
		res, rerr := f.call1(t, "demo-key", "1.0", "SendMessage", `{"message":{"messageId":"m1","role":`+role+`,`+claim+`}}`)
		if rerr != nil {
			t.Fatalf("role %s: %+v", role, rerr)
		}
		var out struct{ Task task1 }
		if err := json.Unmarshal(res, &out); err != nil {
			t.Fatal(err)
		}
		if got := answer1(t, out.Task)["status"]; got != "VALID" {
			t.Errorf("role %s: status %v, want VALID", role, got)
		}
		if len(out.Task.History) != 1 || out.Task.History[0].Role != "ROLE_USER" || out.Task.Status.Message.Role != "ROLE_AGENT" {
			t.Errorf("role %s: roles written %+v, want ROLE_USER and ROLE_AGENT by name", role, out.Task)
		}
	}
	for _, role := range []string{`2`, `0`, `3`, `-1`, `1.5`, `2147483648`, `true`, `"1"`} {
		_, rerr := f.call1(t, "demo-key", "1.0", "SendMessage", `{"message":{"messageId":"m1","role":`+role+`,`+claim+`}}`)
		if rerr == nil || rerr.Code != -32602 || violated(rerr) != "message.role" {
			t.Errorf("role %s: %+v, want invalid params naming message.role", role, rerr)
		}
	}

	list := func(status string) (states []string, rerr *rpcError) {
		res, rerr := f.call1(t, "demo-key", "1.0", "ListTasks", `{"status":`+status+`}`)
		if rerr != nil {
			return nil, rerr
		}
		var out struct{ Tasks []task1 }
		if err := json.Unmarshal(res, &out); err != nil {
			t.Fatal(err)
		}
		for _, task := range out.Tasks {
			states = append(states, task.Status.State)
		}
		return states, nil
	}
	completed := []string{"TASK_STATE_COMPLETED", "TASK_STATE_COMPLETED", "TASK_STATE_COMPLETED"}
	for status, want := range map[string][]string{`3`: completed, `"TASK_STATE_COMPLETED"`: completed, `0`: completed, `4`: nil, `5`: nil} {
		got, rerr := list(status)
		if rerr != nil {
			t.Errorf("ListTasks status %s: %+v", status, rerr)
			continue
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("ListTasks status %s: states (-want +got):\n%s", status, diff)
		}
	}
	for _, status := range []string{`9`, `-1`, `3.5`, `[3]`, `"TASK_STATE_DONE"`} {
		if _, rerr := list(status); rerr == nil || rerr.Code != -32602 || violated(rerr) != "status" {
			t.Errorf("ListTasks status %s: %+v, want invalid params naming status", status, rerr)
		}
	}
}
