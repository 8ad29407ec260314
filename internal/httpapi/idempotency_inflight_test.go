package httpapi_test

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/internal/httpapi"
)

// TestServer_inFlightCallsKeepOthersAnswers: a caller whose requests
// still run holds the most entries of a full idempotency store, none of
// which may go. Its next request is refused 503; it does not push out
// the answer another caller keeps, who holds fewer, and whose retry is
// then replayed rather than run again.
func TestServer_inFlightCallsKeepOthersAnswers(t *testing.T) {
	var runs atomic.Int64
	started, release := make(chan struct{}), make(chan struct{})
	slow := func(*http.Request, []byte) (httpapi.Run, error) {
		return func(context.Context) (any, error) {
			started <- struct{}{}
			<-release
			return map[string]string{"slow": "done"}, nil
		}, nil
	}
	counted := func(*http.Request, []byte) (httpapi.Run, error) {
		return func(context.Context) (any, error) {
			return map[string]int64{"run": runs.Add(1)}, nil
		}, nil
	}
	srv := newServer(t, httpapi.Config{
		Endpoints: []httpapi.Endpoint{
			{Method: "POST", Path: "/slow", Access: httpapi.Key, Prepare: slow},
			{Method: "POST", Path: "/call", Access: httpapi.Key, Prepare: counted},
		},
		Authenticator: httpapi.KeyAuthenticator(map[string]string{"alice-key": "alice", "bob-key": "bob"}),
		Idempotency:   &httpapi.MemoryIdempotencyStore{MaxEntries: 3},
	})
	first := send(t, "POST", srv.URL+"/call", `{}`, "Authorization", "Bearer alice-key", "Idempotency-Key", "a")
	if first.status != http.StatusOK {
		t.Fatalf("alice's call: %d %s", first.status, first.body)
	}

	// Bob's two slow calls hold their keys while they run: the store
	// holds three entries, two of them in flight.
	var wg sync.WaitGroup
	slowStatus := make([]int, 2)
	for i, key := range []string{"b1", "b2"} {
		wg.Go(func() {
			slowStatus[i] = send(t, "POST", srv.URL+"/slow", `{}`, "Authorization", "Bearer bob-key", "Idempotency-Key", key).status
		})
		<-started
	}
	third := send(t, "POST", srv.URL+"/call", `{}`, "Authorization", "Bearer bob-key", "Idempotency-Key", "b3")
	retry := send(t, "POST", srv.URL+"/call", `{}`, "Authorization", "Bearer alice-key", "Idempotency-Key", "a")
	close(release)
	wg.Wait()

	type outcome struct {
		BobsThird, AlicesRetry int
		Replayed, Body         string
		Runs                   int64
		Slow                   []int
	}
	got := outcome{third.status, retry.status, retry.header.Get(httpapi.HeaderIdempotentReplayed), retry.body, runs.Load(), slowStatus}
	want := outcome{http.StatusServiceUnavailable, http.StatusOK, "true", first.body, 1, []int{http.StatusOK, http.StatusOK}}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("bob's calls in flight filling the store (-want +got):\n%s", diff)
	}
}
