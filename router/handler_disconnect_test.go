package router_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

// A client that goes away mid-call ends the call and every goroutine the
// engine started for it, on version 2 (one run) and version 3 (a fan
// out), whether the workers heed their cancelled context or ignore it
// (abandoned after the stop grace; those are let go before the check).
func TestHandler_clientGoesAway(t *testing.T) {
	doors := []struct{ path, body string }{
		{"/api/v2/validate", `{"session_id":1,"claim":{"type":"summary","output":"s"}}`},
		{"/api/v3/validate", `{"claim":{"type":"summary","output":"s"},"consensus":{"replicas":3}}`},
	}
	for _, heeds := range []bool{true, false} {
		for _, door := range doors {
			name := strings.TrimPrefix(door.path, "/api/") + "/heeds"
			if !heeds {
				name = strings.TrimPrefix(door.path, "/api/") + "/ignores"
			}
			t.Run(name, func(t *testing.T) {
				defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
				entered := make(chan struct{}, 3)
				release := make(chan struct{})
				w := router.WorkerFunc(func(ctx context.Context, _ *router.Job) (*router.Result, error) {
					entered <- struct{}{}
					if heeds {
						<-ctx.Done()
					} else {
						<-release
					}
					return nil, context.Canceled
				})
				e := newEngine(t, routertest.Sessions(1, 3, w, w, w), router.WithStopGrace(time.Millisecond))
				h, err := router.NewHandler(e, router.WithAuthenticator(router.KeyAuthenticator(map[string]string{"k": "a"})))
				if err != nil {
					t.Fatal(err)
				}
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				r := httptest.NewRequestWithContext(ctx, http.MethodPost, door.path, strings.NewReader(door.body))
				r.Header.Set("Content-Type", "application/json")
				r.Header.Set("Authorization", "Bearer k")
				rec := httptest.NewRecorder()
				served := make(chan struct{})
				go func() {
					defer close(served)
					h.ServeHTTP(rec, r)
				}()
				select {
				case <-entered:
				case <-served:
					t.Fatalf("answered %d before a worker ran: %s", rec.Code, rec.Body)
				}
				cancel() // the client goes away
				<-served
				close(release) // the workers that ignored it return at last
			})
		}
	}
}
