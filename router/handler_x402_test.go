package router_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// paidServer is a Handler in front of svc whose x402 routes are priced by
// x402.Middleware with the offline facilitator: ping at $0.0001, every
// other x402 route at $0.001.
type paidServer struct {
	*httptest.Server
	fac    *evm.Facilitator
	prices map[string]x402.Price
}

func newPaidServer(t *testing.T, svc router.Service, opts ...router.HandlerOption) *paidServer {
	t.Helper()
	const payTo = "0x000000000000000000000000000000000000dEaD"
	ps := &paidServer{fac: &evm.Facilitator{}, prices: map[string]x402.Price{}}
	for _, rt := range router.Routes() {
		if rt.Variant != router.VariantX402 {
			continue
		}
		price := "$0.001"
		if rt.Op == router.OpPing {
			price = "$0.0001"
		}
		offer, err := evm.USDC("base-sepolia", payTo, price)
		if err != nil {
			t.Fatal(err)
		}
		ps.prices[rt.Method+" "+rt.Path] = x402.Price{Accepts: []x402.PaymentRequirements{offer}, Description: string(rt.Op)}
	}
	mw, err := x402.Middleware(x402.MiddlewareConfig{Facilitator: ps.fac, Routes: ps.prices})
	if err != nil {
		t.Fatal(err)
	}
	ps.Server = newTestServer(t, svc, append([]router.HandlerOption{router.WithX402(mw)}, opts...)...)
	return ps
}

// contractPayKey is a throwaway key that pays on the test network of the
// offline facilitator.
const contractPayKey = "4646464646464646464646464646464646464646464646464646464646464646"

// payingClient returns an http.Client that pays through an x402.Transport
// over base (nil: the server's transport).
func (ps *paidServer) payingClient(t *testing.T, base http.RoundTripper) *http.Client {
	t.Helper()
	payer, err := evm.NewPayer(contractPayKey)
	if err != nil {
		t.Fatal(err)
	}
	if base == nil {
		base = ps.Client().Transport
	}
	return &http.Client{Transport: &x402.Transport{Base: base, Payer: payer}}
}

// TestHandler_x402Ping checks the cheapest paid route end to end: 402 with
// terms without a payment, pong and the settlement with one.
func TestHandler_x402Ping(t *testing.T) {
	ps := newPaidServer(t, &fakeService{})
	r := send(t, "GET", ps.URL+"/api/v1/x402/ping", "", "Authorization", "")
	if r.status != http.StatusPaymentRequired {
		t.Fatalf("unpaid GET /api/v1/x402/ping = %d %s, want 402", r.status, r.body)
	}
	terms, err := x402.DecodePaymentRequired(r.header.Get(x402.HeaderPaymentRequired))
	if err != nil || len(terms.Accepts) != 1 || terms.Accepts[0].Amount != "100" {
		t.Fatalf("terms %+v (%v), want one offer of 100 atomic units ($0.0001 of USDC)", terms, err)
	}

	resp, err := ps.payingClient(t, nil).Get(ps.URL + "/api/v1/x402/ping")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var p struct{ Message string }
	if err := json.NewDecoder(resp.Body).Decode(&p); err != nil || resp.StatusCode != http.StatusOK || p.Message != "pong" {
		t.Fatalf("paid ping = %d %+v (%v), want 200 pong", resp.StatusCode, p, err)
	}
	s, err := x402.SettlementFromResponse(resp)
	if err != nil || !s.Success {
		t.Errorf("settlement %+v (%v), want a successful one in the response", s, err)
	}
	if n := len(ps.fac.Settlements()); n != 1 {
		t.Errorf("settlements = %d, want 1", n)
	}

	// The Client's Ping pays the same way in the x402 variant.
	c, err := router.NewClient(ps.URL, router.WithClientVariant(router.VariantX402),
		router.WithHTTPClient(ps.payingClient(t, nil)), router.WithRetry(router.RetryPolicy{}))
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Ping(context.Background()); err != nil {
		t.Errorf("x402 Client.Ping: %v", err)
	}
	if n := len(ps.fac.Settlements()); n != 2 {
		t.Errorf("settlements after Client.Ping = %d, want 2", n)
	}
}

// headerTransport records the payment header of each request, and, when
// v1 is set, hides the version 2 terms of a 402 so that the payer falls
// back to version 1 (X-PAYMENT).
type headerTransport struct {
	base http.RoundTripper
	v1   bool

	mu   sync.Mutex
	sent []string // the payment header of each paid request
}

func (h *headerTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	for _, name := range []string{x402.HeaderPaymentSignature, x402.HeaderXPayment} {
		if req.Header.Get(name) != "" {
			h.mu.Lock()
			h.sent = append(h.sent, name)
			h.mu.Unlock()
		}
	}
	resp, err := h.base.RoundTrip(req)
	if err == nil && h.v1 && resp.StatusCode == http.StatusPaymentRequired {
		resp.Header.Del(x402.HeaderPaymentRequired)
	}
	return resp, err
}

// TestHandler_x402PaymentHeaders pays a factcheck v1 x402 route, by its
// path and its alias, with a version 2 proof in PAYMENT-SIGNATURE and a
// version 1 proof in X-PAYMENT.
func TestHandler_x402PaymentHeaders(t *testing.T) {
	ws := []router.Worker{routertest.Verdict(router.VerdictTrue), routertest.Verdict(router.VerdictTrue), routertest.Verdict(router.VerdictTrue)}
	for _, tc := range []struct {
		v1                 bool
		header, settlement string
	}{
		{false, x402.HeaderPaymentSignature, x402.HeaderPaymentResponse},
		{true, x402.HeaderXPayment, x402.HeaderXPaymentResponse},
	} {
		for _, path := range []string{"/api/v1/x402/factcheck", "/api/v1/x402/fact-check"} {
			t.Run(tc.header+path, func(t *testing.T) {
				e, err := router.NewEngine(routertest.Sessions(1, 3, ws...))
				if err != nil {
					t.Fatal(err)
				}
				ps := newPaidServer(t, e)
				ht := &headerTransport{base: ps.Client().Transport, v1: tc.v1}
				req, err := http.NewRequest("POST", ps.URL+path, strings.NewReader(`{"claim":"water is wet","policy":{"redundancy":3}}`))
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Content-Type", "application/json")
				resp, err := ps.payingClient(t, ht).Do(req)
				if err != nil {
					t.Fatal(err)
				}
				defer resp.Body.Close()
				var fr router.FactcheckResponse
				if err := json.NewDecoder(resp.Body).Decode(&fr); err != nil || resp.StatusCode != http.StatusOK || fr.Verdict != router.VerdictTrue {
					t.Fatalf("paid call = %d %+v (%v), want 200 TRUE", resp.StatusCode, fr, err)
				}
				if want := []string{tc.header}; !cmp.Equal(ht.sent, want) {
					t.Errorf("payment headers sent = %v, want %v", ht.sent, want)
				}
				if resp.Header.Get(tc.settlement) == "" {
					t.Errorf("no %s in the response", tc.settlement)
				}
				if n := len(ps.fac.Settlements()); n != 1 {
					t.Errorf("settlements = %d, want 1", n)
				}
			})
		}
	}
}
