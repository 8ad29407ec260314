package trusta2a_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/trusta2a"
)

// gated is a trust service whose calls answer only once release is
// closed, or fail when their context ends first; each call sends on
// entered as it starts.
type gated struct {
	entered chan struct{}
	release chan struct{}
}

func newGated() gated {
	return gated{entered: make(chan struct{}, 16), release: make(chan struct{})}
}

func (g gated) Call(ctx context.Context, _ *trust.Request) (*trust.Response, error) {
	g.entered <- struct{}{}
	select {
	case <-g.release:
		return &trust.Response{Status: trust.StatusValid, Result: json.RawMessage(`"17 * 3 = 51"`), Confidence: 1, TraceID: "t1"}, nil
	case <-ctx.Done():
		return nil, context.Cause(ctx)
	}
}

// newGatedServer serves the A2A handler of cfg with caller g, behind the
// keys, on loopback HTTP. The caller closes the server, then the
// handler.
func newGatedServer(t *testing.T, cfg trusta2a.Config, g gated) (*fixture, *trusta2a.Handler, func()) {
	t.Helper()
	cfg.Caller, cfg.Authenticator = g, router.KeyAuthenticator(keys)
	h, err := trusta2a.NewHandler(cfg)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	hc := &http.Client{Transport: &http.Transport{}}
	return &fixture{url: srv.URL, hc: hc}, h, func() {
		hc.CloseIdleConnections()
		srv.Close()
		h.Close()
	}
}

// sendLater is a 1.0 SendMessage asking for a call with returnImmediately.
const sendLater = `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"data":{"claimed_result":"17 * 3 = 51","input":"What is 17 * 3?"}}]},"configuration":{"returnImmediately":true}}`

// v1TaskState is the part of a 1.0 task the tests read.
type v1TaskState struct {
	ID     string `json:"id"`
	Status struct {
		State   string `json:"state"`
		Message *struct {
			Parts    []map[string]any `json:"parts"`
			Metadata map[string]any   `json:"metadata"`
		} `json:"message"`
	} `json:"status"`
	Artifacts []struct {
		Name  string `json:"name"`
		Parts []struct {
			Data map[string]any `json:"data"`
		} `json:"parts"`
	} `json:"artifacts"`
}

// startLater sends sendLater as key and returns the task it answers.
func (f *fixture) startLater(t *testing.T, key string) v1TaskState {
	t.Helper()
	res, rerr := f.call1(t, key, "1.0", "SendMessage", sendLater)
	if rerr != nil {
		t.Fatalf("SendMessage: %+v", rerr)
	}
	var out struct{ Task v1TaskState }
	if err := json.Unmarshal(res, &out); err != nil {
		t.Fatal(err)
	}
	return out.Task
}

// getTask returns task id of key's.
func (f *fixture) getTask(t *testing.T, key, id string) v1TaskState {
	t.Helper()
	res, rerr := f.call1(t, key, "1.0", "GetTask", map[string]string{"id": id})
	if rerr != nil {
		t.Fatalf("GetTask %s: %+v", id, rerr)
	}
	var task v1TaskState
	if err := json.Unmarshal(res, &task); err != nil {
		t.Fatal(err)
	}
	return task
}

// A SendMessage with returnImmediately is answered with its task working
// while the call runs; the call then completes the task, which GetTask
// shows with its artifact.
func TestSendMessage_returnImmediately(t *testing.T) {
	g := newGated()
	f, h, stop := newGatedServer(t, trusta2a.Config{}, g)
	defer stop()
	task := f.startLater(t, "demo-key")
	if task.Status.State != "TASK_STATE_WORKING" || len(task.Artifacts) != 0 {
		t.Fatalf("SendMessage answered %+v, want a working task without artifacts", task)
	}
	<-g.entered
	if got := f.getTask(t, "demo-key", task.ID); got.Status.State != "TASK_STATE_WORKING" {
		t.Errorf("GetTask while the call runs: %s, want TASK_STATE_WORKING", got.Status.State)
	}
	res, rerr := f.call1(t, "demo-key", "1.0", "ListTasks", `{}`)
	if rerr != nil {
		t.Fatal(rerr)
	}
	var list struct{ Tasks []v1TaskState }
	json.Unmarshal(res, &list)
	if len(list.Tasks) != 1 || list.Tasks[0].ID != task.ID || list.Tasks[0].Status.State != "TASK_STATE_WORKING" {
		t.Errorf("ListTasks while the call runs: %+v, want the working task", list.Tasks)
	}
	if _, rerr := f.call1(t, "acme-key", "1.0", "GetTask", map[string]string{"id": task.ID}); rerr == nil || rerr.Code != -32001 {
		t.Errorf("GetTask of another caller's running task: %+v, want TaskNotFound", rerr)
	}
	close(g.release)
	h.Close() // returns once the call has ended and kept its task
	got := f.getTask(t, "demo-key", task.ID)
	if got.Status.State != "TASK_STATE_COMPLETED" || len(got.Artifacts) != 1 || len(got.Artifacts[0].Parts) == 0 {
		t.Fatalf("GetTask after the call: %+v, want completed with an artifact", got)
	}
	if diff := cmp.Diff("validate_claim", got.Artifacts[0].Name); diff != "" {
		t.Errorf("artifact name (-want +got):\n%s", diff)
	}
	data := got.Artifacts[0].Parts[0].Data
	if diff := cmp.Diff(map[string]any{"status": "VALID", "result": "17 * 3 = 51"},
		map[string]any{"status": data["status"], "result": data["result"]}); diff != "" {
		t.Errorf("artifact data (-want +got):\n%s", diff)
	}
}

// The call of a SendMessage with returnImmediately runs on after the
// client that sent it has gone away.
func TestSendMessage_returnImmediatelyClientGoesAway(t *testing.T) {
	g := newGated()
	f, h, stop := newGatedServer(t, trusta2a.Config{}, g)
	defer stop()
	req, err := http.NewRequest(http.MethodPost, f.url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":`+sendLater+`}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer demo-key")
	req.Header.Set("A2A-Version", "1.0")
	hc := &http.Client{Transport: &http.Transport{}}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var out struct{ Result struct{ Task v1TaskState } }
	err = json.NewDecoder(resp.Body).Decode(&out)
	resp.Body.Close()
	hc.CloseIdleConnections() // the client goes away
	if err != nil {
		t.Fatal(err)
	}
	<-g.entered
	close(g.release)
	h.Close()
	if got := f.getTask(t, "demo-key", out.Result.Task.ID); got.Status.State != "TASK_STATE_COMPLETED" {
		t.Errorf("GetTask after the client went away: %+v, want completed", got)
	}
}

// CancelTask of a running task cancels its call and ends it canceled.
func TestCancelTask_running(t *testing.T) {
	g := newGated()
	f, _, stop := newGatedServer(t, trusta2a.Config{}, g)
	defer stop()
	task := f.startLater(t, "demo-key")
	<-g.entered
	if _, rerr := f.call1(t, "acme-key", "1.0", "CancelTask", map[string]string{"id": task.ID}); rerr == nil || rerr.Code != -32001 {
		t.Errorf("CancelTask of another caller's running task: %+v, want TaskNotFound", rerr)
	}
	res, rerr := f.call1(t, "demo-key", "1.0", "CancelTask", map[string]string{"id": task.ID})
	if rerr != nil {
		t.Fatalf("CancelTask: %+v", rerr)
	}
	var canceled v1TaskState
	json.Unmarshal(res, &canceled)
	if canceled.ID != task.ID || canceled.Status.State != "TASK_STATE_CANCELED" {
		t.Errorf("CancelTask answered %+v, want the task canceled", canceled)
	}
	if got := f.getTask(t, "demo-key", task.ID); got.Status.State != "TASK_STATE_CANCELED" {
		t.Errorf("GetTask after CancelTask: %s, want TASK_STATE_CANCELED", got.Status.State)
	}
	if _, rerr := f.call1(t, "demo-key", "1.0", "CancelTask", map[string]string{"id": task.ID}); rerr == nil || rerr.Code != -32002 {
		t.Errorf("CancelTask again: %+v, want TaskNotCancelable", rerr)
	}
}

// A caller has at most MaxTasksPerCaller calls running: the next
// SendMessage with returnImmediately is answered failed 429, its call not
// made; other callers start theirs, and the caller starts again once one
// of its calls has ended.
func TestSendMessage_returnImmediatelyPerCaller(t *testing.T) {
	g := newGated()
	f, _, stop := newGatedServer(t, trusta2a.Config{MaxTasksPerCaller: 2}, g)
	defer stop()
	first := f.startLater(t, "demo-key")
	f.startLater(t, "demo-key")
	<-g.entered
	<-g.entered
	refused := f.startLater(t, "demo-key")
	if refused.Status.State != "TASK_STATE_FAILED" || refused.Status.Message == nil {
		t.Fatalf("a third call running: %+v, want a failed task", refused)
	}
	if diff := cmp.Diff(map[string]any{"status": float64(429), "code": "rate_limited"}, refused.Status.Message.Metadata); diff != "" {
		t.Errorf("the refused task's metadata (-want +got):\n%s", diff)
	}
	if len(g.entered) != 0 {
		t.Error("the refused task's call was made")
	}
	if got := f.startLater(t, "acme-key"); got.Status.State != "TASK_STATE_WORKING" {
		t.Errorf("another caller's call: %s, want TASK_STATE_WORKING", got.Status.State)
	}
	<-g.entered
	// The refused task is kept, beyond the caller's running ones, which
	// are never forgotten while they run.
	if got := f.getTask(t, "demo-key", first.ID); got.Status.State != "TASK_STATE_WORKING" {
		t.Errorf("the first task: %s, want TASK_STATE_WORKING", got.Status.State)
	}
	if _, rerr := f.call1(t, "demo-key", "1.0", "CancelTask", map[string]string{"id": first.ID}); rerr != nil {
		t.Fatal(rerr)
	}
	if got := f.startLater(t, "demo-key"); got.Status.State != "TASK_STATE_WORKING" {
		t.Errorf("a call once one ended: %s, want TASK_STATE_WORKING", got.Status.State)
	}
	<-g.entered
}

// Close ends the running calls, their tasks failed as cancelled calls'
// are, leaves no goroutine behind, and later calls are not made.
func TestHandler_Close(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	g := newGated()
	f, h, stop := newGatedServer(t, trusta2a.Config{}, g)
	defer stop()
	task := f.startLater(t, "demo-key")
	<-g.entered
	h.Close()
	got := f.getTask(t, "demo-key", task.ID)
	if got.Status.State != "TASK_STATE_FAILED" || got.Status.Message == nil {
		t.Fatalf("GetTask after Close: %+v, want failed", got)
	}
	if diff := cmp.Diff(map[string]any{"status": float64(503), "code": "unavailable"}, got.Status.Message.Metadata); diff != "" {
		t.Errorf("the task's metadata (-want +got):\n%s", diff)
	}
	if later := f.startLater(t, "demo-key"); later.Status.State != "TASK_STATE_FAILED" || len(g.entered) != 0 {
		t.Errorf("SendMessage after Close: %s (calls made: %d), want failed without a call", later.Status.State, len(g.entered))
	}
}

// A call that runs longer than BackgroundTimeout ends its task failed
// 504 timeout.
func TestSendMessage_returnImmediatelyTimeout(t *testing.T) {
	g := newGated()
	f, h, stop := newGatedServer(t, trusta2a.Config{BackgroundTimeout: 1}, g)
	defer stop()
	task := f.startLater(t, "demo-key")
	<-g.entered
	h.Close()
	got := f.getTask(t, "demo-key", task.ID)
	if got.Status.State != "TASK_STATE_FAILED" || got.Status.Message == nil {
		t.Fatalf("GetTask: %+v, want failed", got)
	}
	if diff := cmp.Diff(map[string]any{"status": float64(504), "code": "timeout"}, got.Status.Message.Metadata); diff != "" {
		t.Errorf("the task's metadata (-want +got):\n%s", diff)
	}
}

// Version 0.3 reads a running task, and its tasks/cancel cancels it; a
// message/send to it is refused, its call not made again.
func TestRunningTask_version03(t *testing.T) {
	g := newGated()
	f, _, stop := newGatedServer(t, trusta2a.Config{}, g)
	defer stop()
	task := f.startLater(t, "demo-key")
	<-g.entered
	res, rerr := f.post1(t, "demo-key", "0.3", `{"jsonrpc":"2.0","id":1,"method":"tasks/get","params":{"id":"`+task.ID+`"}}`)
	var got struct{ Status struct{ State string } }
	if rerr != nil || json.Unmarshal(res, &got) != nil || got.Status.State != "working" {
		t.Errorf("tasks/get of a running task: %s %+v, want it working", res, rerr)
	}
	res, rerr = f.post1(t, "demo-key", "0.3", `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m2","taskId":"`+task.ID+`","role":"user","parts":[{"kind":"text","text":"Is it true that 17 * 3 = 51?"}]}}}`)
	if rerr == nil || rerr.Code != -32004 || len(g.entered) != 0 {
		t.Errorf("message/send to a running task: %s %+v (calls made: %d), want UnsupportedOperation and no call", res, rerr, len(g.entered))
	}
	if got := f.getTask(t, "demo-key", task.ID); got.Status.State != "TASK_STATE_WORKING" {
		t.Errorf("GetTask after message/send to it: %s, want TASK_STATE_WORKING", got.Status.State)
	}
	res, rerr = f.post1(t, "demo-key", "0.3", `{"jsonrpc":"2.0","id":1,"method":"tasks/cancel","params":{"id":"`+task.ID+`"}}`)
	if rerr != nil || json.Unmarshal(res, &got) != nil || got.Status.State != "canceled" {
		t.Errorf("tasks/cancel of a running task: %s %+v, want it canceled", res, rerr)
	}
	if got := f.getTask(t, "demo-key", task.ID); got.Status.State != "TASK_STATE_CANCELED" {
		t.Errorf("GetTask after tasks/cancel: %s, want TASK_STATE_CANCELED", got.Status.State)
	}
}
