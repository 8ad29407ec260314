package trusta2a_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/a2aproject/a2a-go/a2a"
	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/trust/trusta2a"
)

// rpcError is a JSON-RPC error as A2A 1.0 answers it.
type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
	Data    any    `json:"data"`
}

// details returns the error's details, the objects of its data array.
func (e *rpcError) details() []map[string]any {
	var out []map[string]any
	raw, _ := json.Marshal(e.Data)
	json.Unmarshal(raw, &out)
	return out
}

// call1 posts a JSON-RPC request of method and params (a JSON text, or
// a value to write as JSON) to the A2A endpoint with key and the
// A2A-Version header version (none when empty), and returns its result or
// its error.
func (f *fixture) call1(t *testing.T, key, version, method string, params any) (json.RawMessage, *rpcError) {
	t.Helper()
	raw, ok := params.(string)
	if !ok {
		b, err := json.Marshal(params)
		if err != nil {
			t.Fatal(err)
		}
		raw = string(b)
	}
	return f.post1(t, key, version, fmt.Sprintf(`{"jsonrpc":"2.0","id":7,"method":%q,"params":%s}`, method, raw))
}

// post1 posts body to the A2A endpoint and returns the result or error
// of the JSON-RPC response.
func (f *fixture) post1(t *testing.T, key, version, body string) (json.RawMessage, *rpcError) {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, f.url+"/a2a", bytes.NewReader([]byte(body)))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	if version != "" { // "1.0;0.3" sends two headers
		for _, v := range strings.Split(version, ";") {
			req.Header.Add("A2A-Version", v)
		}
	}
	resp, err := f.hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var out struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Result  json.RawMessage `json:"result"`
		Error   *rpcError       `json:"error"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		t.Fatalf("%s: the answer is not JSON-RPC: %v", body, err)
	}
	if resp.StatusCode != http.StatusOK || out.JSONRPC != "2.0" || (out.Result == nil) == (out.Error == nil) {
		t.Fatalf("%s: %s %+v, want 200 with a JSON-RPC result or error", body, resp.Status, out)
	}
	return out.Result, out.Error
}

// task1 is an A2A 1.0 Task, as much of it as the tests read.
type task1 struct {
	ID        string `json:"id"`
	ContextID string `json:"contextId"`
	Status    struct {
		State   string `json:"state"`
		Message struct {
			Role  string `json:"role"`
			Parts []part1
		} `json:"message"`
		Timestamp string `json:"timestamp"`
	} `json:"status"`
	Artifacts []struct {
		ArtifactID string  `json:"artifactId"`
		Name       string  `json:"name"`
		Parts      []part1 `json:"parts"`
	} `json:"artifacts"`
	History []struct {
		Role  string  `json:"role"`
		Parts []part1 `json:"parts"`
	} `json:"history"`
}

type part1 struct {
	Text      *string        `json:"text"`
	Data      map[string]any `json:"data"`
	MediaType string         `json:"mediaType"`
}

// answer1 returns the data part of a completed 1.0 task's artifact.
func answer1(t *testing.T, task task1) map[string]any {
	t.Helper()
	if task.Status.State != "TASK_STATE_COMPLETED" || len(task.Artifacts) != 1 {
		t.Fatalf("task %s with %d artifacts (%+v), want TASK_STATE_COMPLETED with one", task.Status.State, len(task.Artifacts), task.Status.Message)
	}
	for _, p := range task.Artifacts[0].Parts {
		if p.Data != nil {
			if p.MediaType != "application/json" {
				t.Errorf("the data part's mediaType is %q, want application/json", p.MediaType)
			}
			return p.Data
		}
	}
	t.Fatalf("the artifact has no data part: %+v", task.Artifacts[0].Parts)
	return nil
}

// send1 sends a SendMessage of parts (a JSON array) and returns its task.
func (f *fixture) send1(t *testing.T, key, parts string) task1 {
	t.Helper()
	res, rerr := f.call1(t, key, "1.0", "SendMessage", `{"message":{"messageId":"m1","role":"ROLE_USER","parts":`+parts+`}}`)
	if rerr != nil {
		t.Fatalf("SendMessage %s: %+v", parts, rerr)
	}
	var out struct {
		Task *task1 `json:"task"`
	}
	if err := json.Unmarshal(res, &out); err != nil || out.Task == nil {
		t.Fatalf("SendMessage answered %s, want a task", res)
	}
	return *out.Task
}

// A true and a false claim, by text and by data part, answer VALID and
// INVALID in 1.0 form, and GetTask reads each task back the same.
func TestSendMessage_v1Verdicts(t *testing.T) {
	f := newFixture(t, trusta2a.Config{})
	for _, tt := range []struct{ parts, want string }{
		{`[{"text":"Validate the claimed result \"17 * 3 = 51\" for the task \"What is 17 * 3?\""}]`, "VALID"},
		{`[{"text":"Validate the claimed result \"17 * 3 = 50\" for the task \"What is 17 * 3?\""}]`, "INVALID"},
		{`[{"data":{"claimed_result":"17 * 3 = 50","input":"What is 17 * 3?","policy":"fast"},"mediaType":"application/json"}]`, "INVALID"},
		{`[{"data":{"claimed_result":"17 * 3 = 51","input":"What is 17 * 3?"}}]`, "VALID"},
	} {
		task := f.send1(t, "demo-key", tt.parts)
		if got := answer1(t, task)["status"]; got != tt.want {
			t.Errorf("%s: status %v, want %s", tt.parts, got, tt.want)
		}
		if task.Status.Message.Role != "ROLE_AGENT" || len(task.History) != 1 || task.History[0].Role != "ROLE_USER" || task.Status.Timestamp == "" {
			t.Errorf("%s: status message %+v, history %+v, want the agent's and the user's message", tt.parts, task.Status, task.History)
		}
		res, rerr := f.call1(t, "demo-key", "1.0", "GetTask", map[string]string{"id": task.ID})
		if rerr != nil {
			t.Fatalf("GetTask: %+v", rerr)
		}
		var got task1
		if err := json.Unmarshal(res, &got); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(task, got); diff != "" {
			t.Errorf("GetTask (-SendMessage +GetTask):\n%s", diff)
		}
	}
}

// A task is its caller's: another caller's GetTask, CancelTask and
// ListTasks do not find it; a task made over 0.3 is read over 1.0.
func TestGetTask_v1Callers(t *testing.T) {
	f := newFixture(t, trusta2a.Config{})
	task, err := send(t, f.client(t, "demo-key", nil), a2a.TextPart{Text: `Validate the claimed result "17 * 3 = 51" with policy fast`})
	if err != nil {
		t.Fatal(err)
	}
	res, rerr := f.call1(t, "demo-key", "1.0", "GetTask", map[string]any{"id": task.ID, "historyLength": 0})
	var got task1
	if rerr != nil || json.Unmarshal(res, &got) != nil || answer1(t, got)["status"] != "VALID" || len(got.History) != 0 {
		t.Errorf("GetTask over 1.0 of a 0.3 task: %s %+v, want it VALID, without history", res, rerr)
	}
	for _, method := range []string{"GetTask", "CancelTask"} {
		_, rerr := f.call1(t, "acme-key", "1.0", method, map[string]any{"id": task.ID})
		if rerr == nil || rerr.Code != -32001 || len(rerr.details()) != 1 || rerr.details()[0]["reason"] != "TASK_NOT_FOUND" ||
			rerr.details()[0]["@type"] != "type.googleapis.com/google.rpc.ErrorInfo" || rerr.details()[0]["domain"] != "a2a-protocol.org" {
			t.Errorf("another caller's %s: %+v, want -32001 with ErrorInfo TASK_NOT_FOUND", method, rerr)
		}
	}
	res, rerr = f.call1(t, "acme-key", "1.0", "ListTasks", `{}`)
	if rerr != nil || string(res) != `{"tasks":[],"nextPageToken":"","pageSize":50,"totalSize":0}` {
		t.Errorf("another caller's ListTasks: %s %+v, want no task", res, rerr)
	}
	_, rerr = f.call1(t, "demo-key", "1.0", "CancelTask", map[string]any{"id": task.ID})
	if rerr == nil || rerr.Code != -32002 || rerr.details()[0]["reason"] != "TASK_NOT_CANCELABLE" {
		t.Errorf("CancelTask of a completed task: %+v, want -32002 TASK_NOT_CANCELABLE", rerr)
	}
}

// ListTasks pages through the caller's tasks, the newest first, with
// artifacts only when asked for.
func TestListTasks_v1(t *testing.T) {
	f := newFixture(t, trusta2a.Config{})
	var ids []string
	for i := range 3 {
		task := f.send1(t, "demo-key", fmt.Sprintf(`[{"text":"Validate the claimed result \"17 * 3 = 5%d\" with policy fast"}]`, i))
		ids = append([]string{task.ID}, ids...)
	}
	var page struct {
		Tasks         []task1 `json:"tasks"`
		NextPageToken string  `json:"nextPageToken"`
		PageSize      int     `json:"pageSize"`
		TotalSize     int     `json:"totalSize"`
	}
	read := func(params string) {
		t.Helper()
		page.Tasks = nil
		res, rerr := f.call1(t, "demo-key", "1.0", "ListTasks", params)
		if rerr != nil || json.Unmarshal(res, &page) != nil {
			t.Fatalf("ListTasks %s: %s %+v", params, res, rerr)
		}
	}
	idsOf := func() (got []string) {
		for _, task := range page.Tasks {
			got = append(got, task.ID)
		}
		return got
	}
	read(`{"pageSize":2}`)
	if diff := cmp.Diff(ids[:2], idsOf()); diff != "" || page.NextPageToken == "" || page.TotalSize != 3 || page.Tasks[0].Artifacts != nil {
		t.Errorf("first page (-want +got):\n%s; token %q, total %d, artifacts %v", diff, page.NextPageToken, page.TotalSize, page.Tasks[0].Artifacts)
	}
	read(`{"pageSize":2,"includeArtifacts":true,"pageToken":"` + page.NextPageToken + `"}`)
	if diff := cmp.Diff(ids[2:], idsOf()); diff != "" || page.NextPageToken != "" || len(page.Tasks[0].Artifacts) != 1 {
		t.Errorf("last page (-want +got):\n%s; token %q, artifacts %v", diff, page.NextPageToken, page.Tasks[0].Artifacts)
	}
	read(`{"status":"TASK_STATE_FAILED"}`)
	if len(page.Tasks) != 0 || page.TotalSize != 0 {
		t.Errorf("failed tasks: %v, want none", idsOf())
	}
}

// The A2A-Version header picks the version: absent is 0.3 (or the
// version of a 1.0 method), a version not served, or two versions named,
// is -32009, and a method of the other version is not found.
func TestA2AVersion(t *testing.T) {
	f := newFixture(t, trusta2a.Config{})
	msg03 := `{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"Is it true that 17 * 3 = 51?"}]}}`
	msg10 := `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"Is it true that 17 * 3 = 51?"}]}}`
	for _, tt := range []struct {
		version, method, params string
		code                    int // 0: a result
	}{
		{"", "message/send", msg03, 0},
		{"0.3", "message/send", msg03, 0},
		{"0.3.0", "message/send", msg03, 0},
		{"1.0", "SendMessage", msg10, 0},
		{"", "SendMessage", msg10, 0},
		{"1.0", "message/send", msg03, -32601},
		{"0.3", "SendMessage", msg10, -32601},
		{"2.0", "SendMessage", msg10, -32009},
		{"0.2", "message/send", msg03, -32009},
		{"1.0;1.0.1", "SendMessage", msg10, 0},
		{"1.0;0.3", "SendMessage", msg10, -32009},
		{"0.3;1.0", "message/send", msg03, -32009},
	} {
		_, rerr := f.call1(t, "demo-key", tt.version, tt.method, tt.params)
		switch {
		case tt.code == 0 && rerr != nil:
			t.Errorf("A2A-Version %q, %s: %+v, want a result", tt.version, tt.method, rerr)
		case tt.code != 0 && (rerr == nil || rerr.Code != tt.code):
			t.Errorf("A2A-Version %q, %s: %+v, want error %d", tt.version, tt.method, rerr, tt.code)
		case tt.code == -32009 && rerr.details()[0]["reason"] != "VERSION_NOT_SUPPORTED":
			t.Errorf("A2A-Version %q: %+v, want ErrorInfo VERSION_NOT_SUPPORTED", tt.version, rerr)
		}
	}
}

// A request the agent cannot read is the specification's error, naming
// the member at fault by its JSON field path; no task is made.
func TestSendMessage_v1BadInput(t *testing.T) {
	f := newFixture(t, trusta2a.Config{})
	msg := func(parts string) string {
		return `{"message":{"messageId":"m1","role":"ROLE_USER","parts":` + parts + `}}`
	}
	for _, tt := range []struct {
		params string
		code   int
		field  string
	}{
		{msg(`[{"data":{"input":"What is 17 * 3?","color":"red"}}]`), -32602, "message.parts[0].data.color"},
		{msg(`[{"data":{"claimed_result":"x","a.b":1}}]`), -32602, `message.parts[0].data["a.b"]`},
		{msg(`[{"data":{"input":"x","answer":"number","tolerance":{"abs":1}}}]`), -32602, "message.parts[0].data.tolerance.abs"},
		{msg(`[{"data":{"claimed_result":"x","policy":"gold"}}]`), -32602, "message.parts[0].data.policy"},
		{msg(`[{"text":"{\"claimed_result\":\"x\",\"reciept\":\"inline\"}"}]`), -32602, "message.parts[0].text"},
		{msg(`[{"text":"hello"}]`), -32602, "message.parts[0].text"},
		{msg(`[{"data":[1,2]}]`), -32602, "message.parts[0].data"},
		{msg(`[{"text":"a","data":{}}]`), -32602, "message.parts[0]"},
		{msg(`[{}]`), -32602, "message.parts[0]"},
		{msg(`[{"text":"a","colour":1}]`), -32602, "message.parts[0].colour"},
		{msg(`[{"url":"https://example.com/claim.txt"}]`), -32602, "message.parts[0].url"},
		{msg(`[{"text":"Is it true that 17 * 3 = 51?"},{"raw":"MTcgKiAzID0gNTE=","mediaType":"text/plain"}]`), -32602, "message.parts[1].raw"},
		{msg(`[{"raw":"not base64!"}]`), -32602, "message.parts[0].raw"},
		{msg(`[{"raw":"aGk","mediaType":"text/plain"}]`), -32602, "message.parts[0].raw"},
		{msg(`[]`), -32602, "message.parts"},
		{msg(`[{"text":7}]`), -32602, "message.parts[0].text"},
		{`{"message":{"messageId":"m1","role":"ROLE_AGENT","parts":[{"text":"x"}]}}`, -32602, "message.role"},
		{`{"message":{"role":"ROLE_USER","parts":[{"text":"x"}]}}`, -32602, "message.messageId"},
		{`{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"x"}],"contxtId":"c"}}`, -32602, "message.contxtId"},
		{`{"mesage":{}}`, -32602, "mesage"},
		{`{}`, -32602, "message"},
		{`{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"x"}]},"configuration":{"historyLenght":1}}`, -32602, "configuration.historyLenght"},
		{`{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"x"}]},"tenant":"t"}`, -32602, "tenant"},
		{`{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"x"}]},"configuration":{"taskPushNotificationConfig":{"url":"https://example.com"}}}`, -32003, ""},
		{`{"message":{"messageId":"m1","role":"ROLE_USER","taskId":"nope","parts":[{"text":"x"}]}}`, -32001, ""},
		{`[1]`, -32602, ""},
	} {
		_, rerr := f.call1(t, "demo-key", "1.0", "SendMessage", tt.params)
		if rerr == nil || rerr.Code != tt.code {
			t.Errorf("%s: %+v, want error %d", tt.params, rerr, tt.code)
			continue
		}
		if tt.field == "" {
			continue
		}
		var fields []any
		if d := rerr.details(); len(d) == 1 && d[0]["@type"] == "type.googleapis.com/google.rpc.BadRequest" {
			fields, _ = d[0]["fieldViolations"].([]any)
		}
		if len(fields) != 1 || fields[0].(map[string]any)["field"] != tt.field {
			t.Errorf("%s: %+v, want a BadRequest naming %s", tt.params, rerr, tt.field)
		}
	}
	for _, tt := range []struct {
		body string
		code int
	}{
		{`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":`, -32700},
		{`{"id":1,"method":"SendMessage","params":{}}`, -32600},
		{`{"jsonrpc":"2.0","id":1,"method":"SendMessages","params":{}}`, -32601},
	} {
		if _, rerr := f.post1(t, "demo-key", "1.0", tt.body); rerr == nil || rerr.Code != tt.code {
			t.Errorf("%s: %+v, want error %d", tt.body, rerr, tt.code)
		}
	}
	res, rerr := f.call1(t, "demo-key", "1.0", "ListTasks", `{}`)
	if rerr != nil || !bytes.Contains(res, []byte(`"totalSize":0`)) {
		t.Errorf("ListTasks after bad input: %s %+v, want no task", res, rerr)
	}
}

// A method of 1.0 that needs a capability the card does not declare is
// the error section 3.3.4 of the specification names, with or without
// A2A-Version: UnsupportedOperation for streaming and the extended card,
// PushNotificationNotSupported for the push notification configurations.
func TestV1Unserved(t *testing.T) {
	f := newFixture(t, trusta2a.Config{})
	task := f.send1(t, "demo-key", `[{"text":"Validate the claimed result \"17 * 3 = 51\" with policy fast"}]`)
	type want struct {
		Code   int
		Reason string
	}
	for _, tt := range []struct {
		method, params string
		want           want
	}{
		{"SendStreamingMessage", `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"Is it true that 17 * 3 = 51?"}]}}`, want{-32004, "UNSUPPORTED_OPERATION"}},
		{"SubscribeToTask", `{"id":"` + task.ID + `"}`, want{-32004, "UNSUPPORTED_OPERATION"}},
		{"GetExtendedAgentCard", `{}`, want{-32004, "UNSUPPORTED_OPERATION"}},
		{"CreateTaskPushNotificationConfig", `{"taskId":"` + task.ID + `","url":"https://example.com/hook"}`, want{-32003, "PUSH_NOTIFICATION_NOT_SUPPORTED"}},
		{"GetTaskPushNotificationConfig", `{"taskId":"` + task.ID + `","id":"c1"}`, want{-32003, "PUSH_NOTIFICATION_NOT_SUPPORTED"}},
		{"ListTaskPushNotificationConfigs", `{"taskId":"` + task.ID + `"}`, want{-32003, "PUSH_NOTIFICATION_NOT_SUPPORTED"}},
		{"DeleteTaskPushNotificationConfig", `{"taskId":"` + task.ID + `","id":"c1"}`, want{-32003, "PUSH_NOTIFICATION_NOT_SUPPORTED"}},
	} {
		for _, version := range []string{"1.0", ""} {
			_, rerr := f.call1(t, "demo-key", version, tt.method, tt.params)
			var got want
			if rerr != nil {
				got.Code = rerr.Code
				if d := rerr.details(); len(d) == 1 && d[0]["@type"] == "type.googleapis.com/google.rpc.ErrorInfo" && d[0]["domain"] == "a2a-protocol.org" {
					got.Reason, _ = d[0]["reason"].(string)
				}
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("%s, A2A-Version %q: %+v (-want +got):\n%s", tt.method, version, rerr, diff)
			}
		}
	}
}

// A data part is a google.protobuf.Value in 1.0, whose numbers are
// doubles: Python's protobuf writes {"replicas": 5} as {"replicas": 5.0},
// which asks for five runs as 5 does; 4.0 is refused, naming replicas.
func TestSendMessage_v1ReplicasAsDouble(t *testing.T) {
	f := newFixture(t, trusta2a.Config{})
	for _, replicas := range []string{"5", "5.0", "5e0"} {
		task := f.send1(t, "demo-key", `[{"data":{"claim":"17 * 3 = 51","replicas":`+replicas+`}}]`)
		consensus, _ := answer1(t, task)["consensus"].(map[string]any)
		if consensus["replicas"] != 5.0 {
			t.Errorf("replicas %s: consensus %v, want 5 replicas", replicas, consensus)
		}
	}
	_, rerr := f.call1(t, "demo-key", "1.0", "SendMessage", `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"data":{"claim":"17 * 3 = 51","replicas":4.0}}]}}`)
	if rerr == nil || rerr.Code != -32602 || !strings.Contains(rerr.Message, "message.parts[0].data.replicas") {
		t.Errorf("replicas 4.0: %+v, want invalid params naming message.parts[0].data.replicas", rerr)
	}
}
