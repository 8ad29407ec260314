package trusta2a_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/trusta2a"
)

// slowToStop is a trust service whose calls send on entered as they
// start and on stopping once their context ends, and return only once
// release is closed: a call that takes its time to stop.
type slowToStop struct {
	entered, stopping, release chan struct{}
}

func (s slowToStop) Call(ctx context.Context, _ *trust.Request) (*trust.Response, error) {
	s.entered <- struct{}{}
	<-ctx.Done()
	s.stopping <- struct{}{}
	<-s.release
	return nil, context.Cause(ctx)
}

// A CancelTask whose own request ends (a host's deadline) before the
// call it cancels has stopped is an internal error saying so, never
// TaskNotFound for a task that is there; the task then ends canceled.
func TestCancelTask_requestEndsBeforeTheCallStops(t *testing.T) {
	s := slowToStop{entered: make(chan struct{}, 1), stopping: make(chan struct{}, 1), release: make(chan struct{})}
	h, err := trusta2a.NewHandler(trusta2a.Config{Caller: s, Authenticator: router.KeyAuthenticator(keys)})
	if err != nil {
		t.Fatal(err)
	}
	ended := make(chan struct{})
	// The host ends a request marked X-Host-Deadline once the call it
	// cancels has begun to stop, as a deadline of its own would.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Host-Deadline") != "" {
			ctx, cancel := context.WithCancelCause(r.Context())
			defer cancel(nil)
			go func() {
				select {
				case <-s.stopping:
					cancel(errors.New("the host's deadline"))
				case <-ctx.Done():
				}
				close(ended)
			}()
			r = r.WithContext(ctx)
		}
		h.ServeHTTP(w, r)
	}))
	hc := &http.Client{Transport: &http.Transport{}}
	f := &fixture{url: srv.URL, hc: hc}
	defer func() {
		hc.CloseIdleConnections()
		srv.Close()
		h.Close()
	}()
	task := f.startLater(t, "demo-key")
	<-s.entered

	req, err := http.NewRequest(http.MethodPost, f.url, strings.NewReader(`{"jsonrpc":"2.0","id":7,"method":"CancelTask","params":{"id":"`+task.ID+`"}}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer demo-key")
	req.Header.Set("A2A-Version", "1.0")
	req.Header.Set("X-Host-Deadline", "1")
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Result json.RawMessage
		Error  *rpcError
	}
	err = json.NewDecoder(resp.Body).Decode(&out)
	resp.Body.Close()
	<-ended
	if err != nil {
		t.Fatal(err)
	}
	if out.Error == nil || out.Error.Code != -32603 {
		t.Errorf("CancelTask whose request ended while the call stopped: %s %+v, want -32603", out.Result, out.Error)
	}
	close(s.release)
	h.Close() // returns once the call has ended and kept its task
	if diff := cmp.Diff("TASK_STATE_CANCELED", f.getTask(t, "demo-key", task.ID).Status.State); diff != "" {
		t.Errorf("the task once its call stopped (-want +got):\n%s", diff)
	}
}
