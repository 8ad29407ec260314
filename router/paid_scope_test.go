package router_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

// TestHandler_paidScopeKeepsIntegrationsApart: behind one proxy (one
// address), on an x402 route whose paywall names no payer, two
// integrations with their own bearer keys send the same Idempotency-Key
// and body: each call runs for its own integration, and each retry gets
// its own kept answer.
func TestHandler_paidScopeKeepsIntegrationsApart(t *testing.T) {
	rec := routertest.NewRecorder(routertest.Verdict(router.VerdictValid))
	pass := func(next http.Handler) http.Handler { return next } // admits every request, naming no payer
	h, err := router.NewHandler(newEngine(t, routertest.Sessions(1, 1, rec)),
		router.WithX402(pass),
		router.WithAuthenticator(router.KeyAuthenticator(map[string]string{"key-a": "alice", "key-b": "bob"})))
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(validateV2(1))
	if err != nil {
		t.Fatal(err)
	}
	call := func(key string) string {
		req := httptest.NewRequest(http.MethodPost, "/api/v2/x402/validate", bytes.NewReader(body))
		req.RemoteAddr = "198.51.100.7:40000"
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+key)
		req.Header.Set("Idempotency-Key", "shared")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		if w.Code != http.StatusOK {
			t.Fatalf("key %s: %d %s", key, w.Code, w.Body)
		}
		return w.Header().Get(router.HeaderIdempotentReplayed)
	}
	for i, tc := range []struct{ key, replayed string }{{"key-a", ""}, {"key-b", ""}, {"key-a", "true"}, {"key-b", "true"}} {
		if got := call(tc.key); got != tc.replayed {
			t.Errorf("call %d with %s: replayed %q, want %q", i, tc.key, got, tc.replayed)
		}
	}
	if n := len(rec.Jobs()); n != 2 {
		t.Errorf("%d worker runs, want 2 (one per integration)", n)
	}
}
