package httpapi_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"golang.org/x/time/rate"

	"github.com/vouchkit/vouch/internal/httpapi"
)

// TestServer_trialCallersKeepPaidAnswers: anonymous trial callers from
// many IPv6 /64s (each counts once, a /48 holds 65,536 of them) fill the
// memory idempotency store, yet the answer a paid request kept is still
// there for its retry, which is replayed without running the call again.
func TestServer_trialCallersKeepPaidAnswers(t *testing.T) {
	var runs atomic.Int64
	counting := func(r *http.Request, body []byte) (httpapi.Run, error) {
		return func(context.Context) (any, error) { return map[string]int64{"run": runs.Add(1)}, nil }, nil
	}
	pass := func(next http.Handler) http.Handler { return next } // a paywall that lets every request through
	s, err := httpapi.NewServer(httpapi.Config{
		X402:        pass,
		Payer:       func(*http.Request) string { return "0xa11ce" },
		Idempotency: &httpapi.MemoryIdempotencyStore{MaxEntries: 8, MaxEntriesPerCaller: 4},
		TrialLimit:  httpapi.TrialLimit{Rate: rate.Inf},
		Endpoints: []httpapi.Endpoint{
			{Method: "POST", Path: "/paid", Access: httpapi.Paid, Prepare: counting},
			{Method: "POST", Path: "/trial", Access: httpapi.Trial, Prepare: counting},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	paid := func() (status int, replayed string) {
		req := newPost("/paid", `{}`)
		req.RemoteAddr = "192.0.2.1:1000"
		req.Header.Set("Idempotency-Key", "bought")
		w := serve(s, req)
		return w.Code, w.Header().Get(httpapi.HeaderIdempotentReplayed)
	}
	if status, _ := paid(); status != http.StatusOK {
		t.Fatalf("paid call: %d", status)
	}
	for i := range 64 {
		req := newPost("/trial", `{}`)
		req.RemoteAddr = fmt.Sprintf("[2001:db8:0:%x::1]:1000", i)
		req.Header.Set("Idempotency-Key", "k")
		if w := serve(s, req); w.Code != http.StatusOK {
			t.Fatalf("trial call %d: %d %s", i, w.Code, w.Body)
		}
	}
	status, replayed := paid()
	if status != http.StatusOK || replayed != "true" || runs.Load() != 65 {
		t.Errorf("paid retry: %d, replayed %q, %d runs; want the kept answer replayed and 65 runs", status, replayed, runs.Load())
	}
}

// newPost returns a JSON POST to path.
func newPost(path, body string) *http.Request {
	req := httptest.NewRequest(http.MethodPost, path, strings.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	return req
}

// serve serves req to h and returns the recorded response.
func serve(h http.Handler, req *http.Request) *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}
