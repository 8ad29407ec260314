package router_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
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

// paymentRecorder passes requests on to base and keeps the last payment
// header sent.
type paymentRecorder struct {
	base http.RoundTripper
	sent string
}

func (p *paymentRecorder) RoundTrip(r *http.Request) (*http.Response, error) {
	if v := r.Header.Get(x402.HeaderPaymentSignature); v != "" {
		p.sent = v
	}
	return p.base.RoundTrip(r)
}

// TestHandler_paidAnswerKeptForItsIntegration: on an x402 route that
// takes payment ids, alice pays for a call; bob, sending her payment,
// Idempotency-Key and body with his own key, or with no key, is refused
// as a used payment and does not get her answer, which her own retry
// still gets without running again.
func TestHandler_paidAnswerKeptForItsIntegration(t *testing.T) {
	rec := routertest.NewRecorder(routertest.Verdict(router.VerdictValid))
	offer, err := evm.USDC("base-sepolia", "0x000000000000000000000000000000000000dEaD", "$0.001")
	if err != nil {
		t.Fatal(err)
	}
	mw, err := x402.Middleware(x402.MiddlewareConfig{Facilitator: &evm.Facilitator{}, Routes: map[string]x402.Price{
		"POST /api/v2/x402/validate": {Accepts: []x402.PaymentRequirements{offer}, PaymentIdentifier: &x402.PaymentIdentifier{}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	srv := newTestServer(t, newEngine(t, routertest.Sessions(1, 1, rec)), router.WithX402(mw))
	payer, err := evm.NewPayer(contractPayKey)
	if err != nil {
		t.Fatal(err)
	}
	sent := &paymentRecorder{base: srv.Client().Transport}
	paying := &http.Client{Transport: &x402.Transport{Base: sent, Payer: payer}}
	body, err := json.Marshal(validateV2(1))
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequest(http.MethodPost, srv.URL+"/api/v2/x402/validate", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer "+testKey) // alice
	req.Header.Set("Idempotency-Key", "k1")
	resp, err := paying.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK || sent.sent == "" {
		t.Fatalf("alice's paid call: %d, payment sent %t", resp.StatusCode, sent.sent != "")
	}

	for _, who := range []struct{ name, auth string }{{"bob", "Bearer other-key"}, {"no key", ""}} {
		r := send(t, http.MethodPost, srv.URL+"/api/v2/x402/validate", string(body),
			"Authorization", who.auth, "Idempotency-Key", "k1", x402.HeaderPaymentSignature, sent.sent)
		if r.status == http.StatusOK {
			t.Errorf("%s, with alice's payment: 200 %s; want it refused, not her answer", who.name, r.body)
		}
	}
	r := send(t, http.MethodPost, srv.URL+"/api/v2/x402/validate", string(body),
		"Idempotency-Key", "k1", x402.HeaderPaymentSignature, sent.sent)
	if r.status != http.StatusOK {
		t.Errorf("alice's retry: %d %s, want her kept answer", r.status, r.body)
	}
	if n := len(rec.Jobs()); n != 1 {
		t.Errorf("%d worker runs, want 1", n)
	}
}
