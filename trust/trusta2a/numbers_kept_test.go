package trusta2a_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/trust/trusta2a"
)

// TestKeptTask_numbersAsSent checks that a task read back, with GetTask,
// ListTasks or 0.3's tasks/get, answers a data part's numbers as the
// SendMessage that made it did: an integer no float64 holds is not
// rounded, and a task holding 1e400 is found and listed, not lost.
func TestKeptTask_numbersAsSent(t *testing.T) {
	f := newFixture(t, trusta2a.Config{})
	for _, claimed := range []string{`{"n":12345678901234567891}`, `[1e400,-1e400]`} {
		res, rerr := f.call1(t, "demo-key", "1.0", "SendMessage", `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"data":{"claimed_result":`+claimed+`,"policy":"fast"}}]}}`)
		if rerr != nil {
			t.Fatalf("SendMessage of %s: %+v", claimed, rerr)
		}
		want := resultsOf(t, "SendMessage", res)
		if diff := cmp.Diff([]string{claimed}, want); diff != "" {
			t.Fatalf("SendMessage: result (-sent +answered):\n%s", diff)
		}
		var sent struct{ Task struct{ ID string } }
		if err := json.Unmarshal(res, &sent); err != nil {
			t.Fatal(err)
		}

		res, rerr = f.call1(t, "demo-key", "1.0", "GetTask", map[string]string{"id": sent.Task.ID})
		if rerr != nil {
			t.Errorf("GetTask of the task holding %s: %+v", claimed, rerr)
		} else if diff := cmp.Diff(want, taskResults(t, "GetTask", res)); diff != "" {
			t.Errorf("GetTask: result (-SendMessage +GetTask):\n%s", diff)
		}

		res, rerr = f.call1(t, "demo-key", "1.0", "ListTasks", map[string]any{"includeArtifacts": true, "pageSize": 1})
		var page struct{ Tasks []json.RawMessage }
		if rerr != nil || json.Unmarshal(res, &page) != nil || len(page.Tasks) != 1 {
			t.Errorf("ListTasks: %s %+v, want the task", res, rerr)
		} else if diff := cmp.Diff(want, taskResults(t, "ListTasks", page.Tasks[0])); diff != "" {
			t.Errorf("ListTasks: result (-SendMessage +ListTasks):\n%s", diff)
		}

		res, rerr = f.call1(t, "demo-key", "0.3", "tasks/get", map[string]string{"id": sent.Task.ID})
		if rerr != nil {
			t.Errorf("tasks/get of the task holding %s: %+v", claimed, rerr)
		} else if diff := cmp.Diff(want, taskResults(t, "tasks/get", res)); diff != "" {
			t.Errorf("tasks/get: result (-SendMessage +tasks/get):\n%s", diff)
		}
	}
}
