package trust_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// A client that goes away mid-call ends the trust call and every
// goroutine started for it, whether the workers heed their cancelled
// context or ignore it (abandoned after the stop grace; those are let
// go before the check).
func TestHandler_clientGoesAway(t *testing.T) {
	for _, heeds := range []bool{true, false} {
		name := "heeds"
		if !heeds {
			name = "ignores"
		}
		t.Run(name, func(t *testing.T) {
			defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
			entered := make(chan struct{}, 5)
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
			e, err := router.NewEngine(routertest.Sessions(1, 3, w, w, w), router.WithStopGrace(time.Millisecond))
			if err != nil {
				t.Fatal(err)
			}
			svc, err := trust.New(e)
			if err != nil {
				t.Fatal(err)
			}
			h, err := trust.NewHandler(svc, trust.WithAuthenticator(router.KeyAuthenticator(map[string]string{testKey: "alice"})))
			if err != nil {
				t.Fatal(err)
			}
			body, err := json.Marshal(validationRequest())
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			r := httptest.NewRequestWithContext(ctx, http.MethodPost, "/api/v4/trust", bytes.NewReader(body))
			r.Header.Set("Content-Type", "application/json")
			r.Header.Set("Authorization", "Bearer "+testKey)
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
