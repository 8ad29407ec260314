package trusta2a_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/trusta2a"
)

// waiting is a trust service whose calls return only once their context
// is done; entered is closed when the first call starts.
type waiting struct{ entered chan struct{} }

func (w waiting) Call(ctx context.Context, _ *trust.Request) (*trust.Response, error) {
	close(w.entered)
	<-ctx.Done()
	return nil, context.Cause(ctx)
}

// A client that goes away mid-call ends the call, in either version: in
// 0.3 the SDK runs the call in goroutines of its own on a context detached
// from the request's, and the call (and they) ran on after the request
// ended, forever under a Caller that waits for its context.
func TestMessageSend_clientGoesAway(t *testing.T) {
	bodies := map[string]string{
		"0.3": `{"jsonrpc":"2.0","id":1,"method":"message/send","params":{"message":{"kind":"message","messageId":"m1","role":"user","parts":[{"kind":"text","text":"Validate the claimed result \"17 * 3 = 51\""}]}}}`,
		"1.0": `{"jsonrpc":"2.0","id":1,"method":"SendMessage","params":{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":"Validate the claimed result \"17 * 3 = 51\""}]}}}`,
	}
	for _, version := range []string{"0.3", "1.0"} {
		t.Run(version, func(t *testing.T) {
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
			caller := waiting{entered: make(chan struct{})}
			h, err := trusta2a.NewHandler(trusta2a.Config{Caller: caller})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			r := httptest.NewRequestWithContext(ctx, http.MethodPost, "/", strings.NewReader(bodies[version]))
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("A2A-Version", version)
			served := make(chan struct{})
			go func() {
				defer close(served)
				h.ServeHTTP(httptest.NewRecorder(), r)
			}()
			<-caller.entered
			cancel() // the client goes away
			<-served
		})
	}
}
