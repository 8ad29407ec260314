package trusta2a_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/trusta2a"
)

// slowStop is a trust service whose calls, once cancelled, return only
// when release is closed, as a remote call winding down would.
type slowStop struct {
	entered chan struct{}
	release chan struct{}
}

func (s slowStop) Call(ctx context.Context, _ *trust.Request) (*trust.Response, error) {
	s.entered <- struct{}{}
	<-ctx.Done()
	<-s.release
	return nil, context.Cause(ctx)
}

// slowStopServer serves a handler over a slowStop caller, over loopback,
// and returns its fixture, the caller, and what stops it all.
func slowStopServer(t *testing.T) (*fixture, slowStop, func()) {
	t.Helper()
	s := slowStop{entered: make(chan struct{}, 4), release: make(chan struct{})}
	h, err := trusta2a.NewHandler(trusta2a.Config{Caller: s, Authenticator: router.KeyAuthenticator(keys)})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	hc := &http.Client{Transport: &http.Transport{}}
	return &fixture{url: srv.URL, hc: hc}, s, func() { h.Close(); hc.CloseIdleConnections(); srv.Close() }
}

// A version 0.3 tasks/cancel by another caller, sent while the owner's
// own cancel of the same task waits for its call to stop, is answered
// TaskNotFound, never with the owner's task and its message: the SDK
// that serves 0.3 knows a cancel in flight by its task id alone. The
// pauses only give the second cancel its best chance to join the first.
func TestTasksCancel03_otherCallerWhileCancelling(t *testing.T) {
	f, s, stop := slowStopServer(t)
	defer stop()

	task := f.startNonBlocking03(t, "demo-key")
	<-s.entered
	cancel := `{"jsonrpc":"2.0","id":3,"method":"tasks/cancel","params":{"id":"` + task.ID + `"}}`
	type answer struct {
		task task03
		rerr *rpcError
		err  error
	}
	send := func(key string, to chan<- answer) {
		tk, rerr, err := f.post03(key, cancel)
		to <- answer{tk, rerr, err}
	}
	own, other := make(chan answer, 1), make(chan answer, 1)
	go send("demo-key", own)
	time.Sleep(300 * time.Millisecond)
	go send("acme-key", other)
	time.Sleep(300 * time.Millisecond)
	close(s.release)
	o, a := <-own, <-other
	if o.err != nil || a.err != nil {
		t.Fatal(o.err, a.err)
	}
	if o.rerr != nil || o.task.Status.State != "canceled" {
		t.Errorf("the owner's tasks/cancel: %+v %+v, want its task canceled", o.task, o.rerr)
	}
	if a.rerr == nil || a.rerr.Code != -32001 {
		history, _ := json.Marshal(a.task.History)
		t.Errorf("another caller's tasks/cancel: error %+v, task %q %q, history %s; want TaskNotFound (-32001)", a.rerr, a.task.ID, a.task.Status.State, history)
	}
}

// A version 0.3 message/send that names another caller's running task as
// its taskId is answered TaskNotFound, as for a task that does not
// exist, not with word that the task runs; the owner is told it does.
func TestMessageSend03_otherCallersTask(t *testing.T) {
	f, s, stop := slowStopServer(t)
	defer stop()
	defer close(s.release)

	task := f.startNonBlocking03(t, "demo-key")
	<-s.entered
	again := `{"jsonrpc":"2.0","id":4,"method":"message/send","params":{"message":{"kind":"message","messageId":"m2","taskId":"` + task.ID + `","role":"user","parts":[{"kind":"text","text":"Is it true that 17 * 3 = 51?"}]}}}`
	for key, code := range map[string]int{"acme-key": -32001, "demo-key": -32004} {
		if _, rerr := f.rpc03(t, key, again); rerr == nil || rerr.Code != code {
			t.Errorf("%s: message/send naming demo's running task: error %+v, want code %d", key, rerr, code)
		}
	}
}
