package trusta2a_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/trust/trusta2a"
)

// send03 is a 0.3 message/send asking for a call, with the configuration
// config ("" for none).
func send03(config string) string {
	params := `{"message":{"kind":"message","messageId":"m1","contextId":"c1","role":"user","parts":[{"kind":"data","data":{"claimed_result":"17 * 3 = 51","input":"What is 17 * 3?"}}]}`
	if config != "" {
		params += `,"configuration":` + config
	}
	return `{"jsonrpc":"2.0","id":1,"method":"message/send","params":` + params + `}}`
}

// sendNonBlocking03 is send03 with blocking false.
var sendNonBlocking03 = send03(`{"blocking":false}`)

// task03 is the part of a 0.3 task the tests read.
type task03 struct {
	Kind      string `json:"kind"`
	ID        string `json:"id"`
	ContextID string `json:"contextId"`
	Status    struct {
		State   string `json:"state"`
		Message *struct {
			Parts    []map[string]any `json:"parts"`
			Metadata map[string]any   `json:"metadata"`
		} `json:"message"`
	} `json:"status"`
	Artifacts []map[string]any `json:"artifacts"`
	History   []map[string]any `json:"history"`
}

// rpc03 posts body, a 0.3 request, as key, and returns the task it
// answers, or its error. The answer must come within 5 seconds: a call
// of the gated caller runs until the test releases it.
func (f *fixture) rpc03(t *testing.T, key, body string) (task03, *rpcError) {
	t.Helper()
	task, rerr, err := f.post03(key, body)
	if err != nil {
		t.Fatal(err)
	}
	return task, rerr
}

// post03 is rpc03 for any goroutine: it returns what fails the exchange
// rather than failing a test.
func (f *fixture) post03(key, body string) (task03, *rpcError, error) {
	req, err := http.NewRequest(http.MethodPost, f.url, bytes.NewReader([]byte(body)))
	if err != nil {
		return task03{}, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+key)
	req.Header.Set("A2A-Version", "0.3")
	hc := &http.Client{Transport: f.hc.Transport, Timeout: 5 * time.Second}
	resp, err := hc.Do(req)
	if err != nil {
		return task03{}, nil, fmt.Errorf("%s: not answered while its call runs: %w", body, err)
	}
	defer resp.Body.Close()
	var out struct {
		Result *task03
		Error  *rpcError
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil || (out.Result == nil) == (out.Error == nil) {
		return task03{}, nil, fmt.Errorf("%s: %s, want a JSON-RPC result or error (%v)", body, resp.Status, err)
	}
	if out.Error != nil {
		return task03{}, out.Error, nil
	}
	return *out.Result, nil, nil
}

// get03 returns task id of key's, read with tasks/get.
func (f *fixture) get03(t *testing.T, key, id string) task03 {
	t.Helper()
	task, rerr := f.rpc03(t, key, `{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"id":"`+id+`"}}`)
	if rerr != nil {
		t.Fatalf("tasks/get %s: %+v", id, rerr)
	}
	return task
}

// startNonBlocking03 sends sendNonBlocking03 as key and returns the task
// it answers.
func (f *fixture) startNonBlocking03(t *testing.T, key string) task03 {
	t.Helper()
	task, rerr := f.rpc03(t, key, sendNonBlocking03)
	if rerr != nil {
		t.Fatalf("message/send with blocking false: %+v", rerr)
	}
	return task
}

// withoutIDs returns v, a task's artifacts or history as JSON, without
// the artifacts' ids (made anew for each task).
func withoutIDs(t *testing.T, v []map[string]any) []map[string]any {
	t.Helper()
	raw, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	var out []map[string]any
	json.Unmarshal(raw, &out)
	for _, m := range out {
		delete(m, "artifactId")
	}
	return out
}

// A 0.3 message/send with blocking false is answered at once with its
// task working, as the SDK writes a task, while its call runs; tasks/get
// reads it working, and, once the call has ended, completed with the
// artifact a blocking message/send answers. Another caller finds no such
// task.
func TestMessageSend_nonBlocking03(t *testing.T) {
	g := newGated()
	f, _, stop := newGatedServer(t, trusta2a.Config{}, g)
	defer stop()
	task := f.startNonBlocking03(t, "demo-key")
	if task.Kind != "task" || task.ID == "" || task.ContextID != "c1" || task.Status.State != "working" || len(task.Artifacts) != 0 {
		t.Fatalf("message/send with blocking false answered %+v, want a working task of context c1 without artifacts", task)
	}
	<-g.entered
	if got := f.get03(t, "demo-key", task.ID); got.Status.State != "working" {
		t.Errorf("tasks/get while the call runs: %s, want working", got.Status.State)
	}
	if _, rerr := f.rpc03(t, "acme-key", `{"jsonrpc":"2.0","id":2,"method":"tasks/get","params":{"id":"`+task.ID+`"}}`); rerr == nil || rerr.Code != -32001 {
		t.Errorf("tasks/get of another caller's running task: %+v, want TaskNotFound (-32001)", rerr)
	}
	close(g.release)
	got := f.get03(t, "demo-key", task.ID)
	for deadline := time.Now().Add(5 * time.Second); got.Status.State == "working" && time.Now().Before(deadline); {
		time.Sleep(10 * time.Millisecond)
		got = f.get03(t, "demo-key", task.ID)
	}
	if got.Kind != "task" || got.ID != task.ID || got.ContextID != "c1" || got.Status.State != "completed" {
		t.Fatalf("tasks/get once the call has ended: %+v, want task %s of context c1 completed", got, task.ID)
	}
	blocking, rerr := f.rpc03(t, "demo-key", send03(""))
	if rerr != nil {
		t.Fatalf("a blocking message/send: %+v", rerr)
	}
	<-g.entered
	if diff := cmp.Diff(withoutIDs(t, blocking.Artifacts), withoutIDs(t, got.Artifacts)); diff != "" {
		t.Errorf("the artifacts of the non-blocking task (-blocking +non-blocking):\n%s", diff)
	}
	if diff := cmp.Diff(withoutIDs(t, blocking.History), withoutIDs(t, got.History)); diff != "" {
		t.Errorf("the history of the non-blocking task (-blocking +non-blocking):\n%s", diff)
	}
	if diff := cmp.Diff(blocking.Status.Message.Parts, got.Status.Message.Parts); diff != "" {
		t.Errorf("the status message of the non-blocking task (-blocking +non-blocking):\n%s", diff)
	}
}

// A 0.3 tasks/cancel of a task whose non-blocking message/send runs
// cancels its call and ends it canceled; another caller cannot cancel it.
func TestTasksCancel_nonBlocking03(t *testing.T) {
	g := newGated()
	f, _, stop := newGatedServer(t, trusta2a.Config{}, g)
	defer stop()
	task := f.startNonBlocking03(t, "demo-key")
	<-g.entered
	cancel := `{"jsonrpc":"2.0","id":3,"method":"tasks/cancel","params":{"id":"` + task.ID + `"}}`
	if _, rerr := f.rpc03(t, "acme-key", cancel); rerr == nil || rerr.Code != -32001 {
		t.Errorf("tasks/cancel of another caller's running task: %+v, want TaskNotFound (-32001)", rerr)
	}
	if got := f.get03(t, "demo-key", task.ID); got.Status.State != "working" {
		t.Errorf("tasks/get after another caller's tasks/cancel: %s, want working", got.Status.State)
	}
	canceled, rerr := f.rpc03(t, "demo-key", cancel)
	if rerr != nil || canceled.ID != task.ID || canceled.Status.State != "canceled" {
		t.Fatalf("tasks/cancel: %+v %+v, want the task canceled", canceled, rerr)
	}
	if got := f.get03(t, "demo-key", task.ID); got.Status.State != "canceled" {
		t.Errorf("tasks/get after tasks/cancel: %s, want canceled", got.Status.State)
	}
}

// A 0.3 non-blocking message/send counts against MaxTasksPerCaller with
// the 1.0 SendMessages with returnImmediately: beyond, the task is
// answered failed 429, its call not made; another caller starts its own.
func TestMessageSend_nonBlocking03PerCaller(t *testing.T) {
	g := newGated()
	f, _, stop := newGatedServer(t, trusta2a.Config{MaxTasksPerCaller: 2}, g)
	defer stop()
	f.startNonBlocking03(t, "demo-key")
	f.startLater(t, "demo-key")
	<-g.entered
	<-g.entered
	refused := f.startNonBlocking03(t, "demo-key")
	if refused.Kind != "task" || refused.Status.State != "failed" || refused.Status.Message == nil {
		t.Fatalf("a third call running: %+v, want a failed task", refused)
	}
	if diff := cmp.Diff(map[string]any{"status": float64(429), "code": "rate_limited"}, refused.Status.Message.Metadata); diff != "" {
		t.Errorf("the refused task's metadata (-want +got):\n%s", diff)
	}
	if len(g.entered) != 0 {
		t.Error("the refused task's call was made")
	}
	if got := f.get03(t, "demo-key", refused.ID); got.Status.State != "failed" {
		t.Errorf("tasks/get of the refused task: %s, want failed", got.Status.State)
	}
	if got := f.startNonBlocking03(t, "acme-key"); got.Status.State != "working" {
		t.Errorf("another caller's call: %s, want working", got.Status.State)
	}
	<-g.entered
}

// Handler.Close ends the call of a 0.3 non-blocking message/send, its
// task failed 503, as it ends those of 1.0.
func TestMessageSend_nonBlocking03Close(t *testing.T) {
	g := newGated()
	f, h, stop := newGatedServer(t, trusta2a.Config{}, g)
	defer stop()
	task := f.startNonBlocking03(t, "demo-key")
	<-g.entered
	h.Close()
	got := f.get03(t, "demo-key", task.ID)
	if got.Status.State != "failed" || got.Status.Message == nil {
		t.Fatalf("tasks/get after Close: %+v, want failed", got)
	}
	if diff := cmp.Diff(map[string]any{"status": float64(503), "code": "unavailable"}, got.Status.Message.Metadata); diff != "" {
		t.Errorf("the task's metadata (-want +got):\n%s", diff)
	}
}

// A non-blocking message/send the agent cannot read is refused as a
// blocking one is, no task made and no call.
func TestMessageSend_nonBlocking03Refused(t *testing.T) {
	g := newGated()
	f, _, stop := newGatedServer(t, trusta2a.Config{}, g)
	defer stop()
	body := func(config string) string {
		s := `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"data","data":{"claimed_result":"17 * 3 = 51","policy":"cheap"}}]}`
		if config != "" {
			s += `,"configuration":` + config
		}
		return s + `}}`
	}
	_, blocking := f.rpc03(t, "demo-key", body(""))
	_, nonBlocking := f.rpc03(t, "demo-key", body(`{"blocking":false}`))
	if blocking == nil || blocking.Code != -32602 {
		t.Fatalf("a blocking message/send of a bad policy: %+v, want invalid params", blocking)
	}
	if diff := cmp.Diff(blocking, nonBlocking); diff != "" {
		t.Errorf("the error of a non-blocking message/send (-blocking +non-blocking):\n%s", diff)
	}
	if len(g.entered) != 0 {
		t.Error("a call was made")
	}
}
