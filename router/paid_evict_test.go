package router_test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"testing"

	"golang.org/x/time/rate"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// TestHandler_trialTrafficKeepsPaidAnswer: a paid validate is settled and
// its answer kept; then anonymous trial callers from 64 IPv6 /64s (behind
// a trusted proxy) fill the memory idempotency store. The payer's retry
// with the same proof and key still gets its kept answer, replayed with
// the first settlement: settled once, worked once for it.
func TestHandler_trialTrafficKeepsPaidAnswer(t *testing.T) {
	offer, err := evm.USDC("base-sepolia", "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", "$0.001")
	if err != nil {
		t.Fatal(err)
	}
	fac := &evm.Facilitator{}
	mw, err := x402.Middleware(x402.MiddlewareConfig{
		Facilitator: fac,
		Routes:      map[string]x402.Price{"POST /api/v2/x402/validate": {Accepts: []x402.PaymentRequirements{offer}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	rec := routertest.NewRecorder(routertest.Verdict(router.VerdictValid))
	h, err := router.NewHandler(newEngine(t, routertest.Sessions(1, 1, rec)),
		router.WithX402(mw),
		router.WithTrialLimit(router.TrialLimit{Rate: rate.Inf}),
		router.WithTrustedProxies(netip.MustParsePrefix("10.0.0.0/8")),
		router.WithIdempotency(&router.MemoryIdempotencyStore{MaxEntries: 8, MaxEntriesPerCaller: 4}, 0))
	if err != nil {
		t.Fatal(err)
	}
	payer, err := evm.NewPayer(payerKey)
	if err != nil {
		t.Fatal(err)
	}
	pr, err := payer.Pay(t.Context(), offer)
	if err != nil {
		t.Fatal(err)
	}
	proof, err := x402.EncodeHeader(x402.PaymentPayload{X402Version: 2, Accepted: offer, Payload: pr.Payload})
	if err != nil {
		t.Fatal(err)
	}
	body, err := json.Marshal(validateV2(1))
	if err != nil {
		t.Fatal(err)
	}
	post := func(path, client string, headers ...string) *httptest.ResponseRecorder {
		req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
		req.RemoteAddr = "10.0.0.7:40000" // the proxy
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("X-Forwarded-For", client)
		for i := 0; i+1 < len(headers); i += 2 {
			req.Header.Set(headers[i], headers[i+1])
		}
		w := httptest.NewRecorder()
		h.ServeHTTP(w, req)
		return w
	}
	paid := func() *httptest.ResponseRecorder {
		return post("/api/v2/x402/validate", "192.0.2.1", x402.HeaderPaymentSignature, proof, "Idempotency-Key", "bought")
	}
	first := paid()
	if first.Code != http.StatusOK {
		t.Fatalf("paid call: %d %s", first.Code, first.Body)
	}
	for i := range 64 {
		if w := post("/api/v2/trial/validate", fmt.Sprintf("2001:db8:0:%x::1", i), "Idempotency-Key", "k"); w.Code != http.StatusOK {
			t.Fatalf("trial call %d: %d %s", i, w.Code, w.Body)
		}
	}
	retry := paid()
	if retry.Code != http.StatusOK || retry.Header().Get(router.HeaderIdempotentReplayed) != "true" || retry.Body.String() != first.Body.String() {
		t.Errorf("payer's retry: %d, replayed %q, %s; want its kept answer replayed", retry.Code, retry.Header().Get(router.HeaderIdempotentReplayed), retry.Body)
	}
	if n := len(fac.Settlements()); n != 1 {
		t.Errorf("%d settlements, want 1", n)
	}
	if n := len(rec.Jobs()); n != 65 {
		t.Errorf("%d worker runs, want 65 (the paid call once, 64 trial calls)", n)
	}
}
