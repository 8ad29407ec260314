package httpapi_test

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/vouchkit/vouch/internal/httpapi"
)

// TestServer_paidAnswerKeptOnlyOnceSettled: the answer of a paid request
// is kept for replay only once Config.AfterSettle reports its payment
// settled. A retry after a settlement that failed runs the call again;
// a retry after one that settled is replayed.
func TestServer_paidAnswerKeptOnlyOnceSettled(t *testing.T) {
	var (
		mu      sync.Mutex
		pending []func(bool)
		runs    atomic.Int32
	)
	counted := func(r *http.Request, body []byte) (httpapi.Run, error) {
		return func(context.Context) (any, error) {
			return map[string]int32{"run": runs.Add(1)}, nil
		}, nil
	}
	srv := newServer(t, httpapi.Config{
		X402:  func(next http.Handler) http.Handler { return next },
		Payer: func(*http.Request) string { return "0xa11ce" },
		AfterSettle: func(_ context.Context, f func(bool)) bool {
			mu.Lock()
			defer mu.Unlock()
			pending = append(pending, f)
			return true
		},
		Endpoints: []httpapi.Endpoint{{Method: "POST", Path: "/paid", Access: httpapi.Paid, Prepare: counted}},
	})
	settle := func(settled bool) {
		t.Helper()
		mu.Lock()
		fs := pending
		pending = nil
		mu.Unlock()
		if len(fs) != 1 {
			t.Fatalf("%d settlement waits registered, want 1", len(fs))
		}
		fs[0](settled)
	}
	call := func() (body, replayed string) {
		t.Helper()
		got := send(t, "POST", srv.URL+"/paid", `{}`, "Idempotency-Key", "k1")
		if got.status != http.StatusOK {
			t.Fatalf("status %d %s", got.status, got.body)
		}
		return got.body, got.header.Get(httpapi.HeaderIdempotentReplayed)
	}

	first, replayed := call()
	if replayed != "" {
		t.Fatalf("first call replayed")
	}
	settle(false) // the payment did not settle: nothing is kept
	second, replayed := call()
	if replayed != "" || second == first {
		t.Fatalf("retry after a failed settlement: replayed %q, body %s (first %s); want a new run", replayed, second, first)
	}
	settle(true)
	third, replayed := call()
	if replayed != "true" || third != second {
		t.Errorf("retry after a settled payment: replayed %q, body %s; want the kept %s", replayed, third, second)
	}
	if n := runs.Load(); n != 2 {
		t.Errorf("%d runs, want 2", n)
	}
}
