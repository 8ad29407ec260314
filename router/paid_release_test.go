package router_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// switchSettler is the offline facilitator whose settlements fail while
// failing is set, as when the payer cancelled its authorization's nonce
// or moved its balance after verification.
type switchSettler struct {
	*evm.Facilitator
	failing atomic.Bool
}

func (f *switchSettler) Settle(ctx context.Context, p *x402.PaymentPayload, o x402.PaymentRequirements) (*x402.SettleResponse, error) {
	if f.failing.Load() {
		return &x402.SettleResponse{ErrorReason: "insufficient_funds", Network: o.Network}, nil
	}
	return f.Facilitator.Settle(ctx, p, o)
}

// switchGate is a delivery gate that refuses while refusing is set; it
// counts its checks.
type switchGate struct {
	refusing atomic.Bool
	checks   atomic.Int32
}

func (g *switchGate) check(context.Context, *http.Request, []byte, *x402.BufferedResponse) x402.Delivery {
	g.checks.Add(1)
	if g.refusing.Load() {
		return x402.Delivery{Refusal: x402.BufferedResponse{Status: http.StatusBadGateway, Body: []byte(`{"title":"not delivered"}`)}}
	}
	return x402.Delivery{Deliver: true}
}

// newReleaseServer serves a router.Handler on one honest session behind the
// x402 middleware with fac, and gate when not nil, on loopback.
func newReleaseServer(t *testing.T, fac x402.Facilitator, gate *x402.DeliveryGate, opts ...router.HandlerOption) (*httptest.Server, *routertest.Recorder) {
	t.Helper()
	offer, err := evm.USDC("base-sepolia", "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", "$0.001")
	if err != nil {
		t.Fatal(err)
	}
	mw, err := x402.Middleware(x402.MiddlewareConfig{
		Facilitator: fac,
		Routes:      map[string]x402.Price{"POST /api/v2/x402/validate": {Accepts: []x402.PaymentRequirements{offer}, Gate: gate}},
	})
	if err != nil {
		t.Fatal(err)
	}
	rec := routertest.NewRecorder(routertest.Verdict(router.VerdictValid))
	h, err := router.NewHandler(newEngine(t, routertest.Sessions(1, 1, rec)), append([]router.HandlerOption{router.WithX402(mw)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, rec
}

// paidAnswer is what a paid POST got.
type paidAnswer struct {
	status     int
	replayed   bool
	settlement *x402.SettleResponse // nil when the answer carries none
	body       []byte
}

// postPaid sends validateV2(1) with the Idempotency-Key key to srv's
// paid validate route through a new x402.Transport paying with payer: a
// payer whose Transport no longer has an earlier proof, so it signs a
// new one.
func postPaid(t *testing.T, srv *httptest.Server, payer x402.Payer, key string) paidAnswer {
	t.Helper()
	body, err := json.Marshal(validateV2(1))
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/api/v2/x402/validate", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", key)
	c := &http.Client{Transport: &x402.Transport{Payer: payer}}
	resp, err := c.Do(req)
	if err != nil {
		// A payment the server refused: its 402 came back as an error.
		return paidAnswer{status: http.StatusPaymentRequired}
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	a := paidAnswer{status: resp.StatusCode, replayed: resp.Header.Get(router.HeaderIdempotentReplayed) == "true", body: b}
	if sr, err := x402.SettlementFromResponse(resp); err == nil {
		a.settlement = sr
	}
	return a
}

// newWallet returns a payer with a fresh random key.
func newWallet(t *testing.T) *evm.Payer {
	t.Helper()
	b := make([]byte, 32)
	rand.Read(b)
	p, err := evm.NewPayer("0x" + hex.EncodeToString(b))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// TestHandler_paidAnswerOfFailedSettlementIsReleased: a paid validate
// runs and its settlement fails (the payer emptied its balance). The
// payer's retry with the same Idempotency-Key and a new proof is a fresh
// purchase: the work runs again and the new proof is settled; the answer
// of the failed settlement is never delivered as bought.
func TestHandler_paidAnswerOfFailedSettlementIsReleased(t *testing.T) {
	fac := &switchSettler{Facilitator: &evm.Facilitator{}}
	srv, rec := newReleaseServer(t, fac, nil)
	payer := newWallet(t)

	fac.failing.Store(true)
	if got := postPaid(t, srv, payer, "k"); got.status != http.StatusPaymentRequired {
		t.Fatalf("call whose settlement fails: %d %s, want 402", got.status, got.body)
	}
	fac.failing.Store(false)
	got := postPaid(t, srv, payer, "k")
	if got.status != http.StatusOK || got.replayed || got.settlement == nil || !got.settlement.Success {
		t.Errorf("retry with a new proof: %d, replayed %v, settlement %+v; want 200, run anew and settled", got.status, got.replayed, got.settlement)
	}
	if n := len(fac.Settlements()); n != 1 {
		t.Errorf("%d settlements, want 1 (the retry's)", n)
	}
	if n := rec.Calls.Load(); n != 2 {
		t.Errorf("the worker ran %d times, want 2", n)
	}
	// The answer the retry paid for is now kept: the same payer's next
	// retry with yet another proof gets it, verified and not settled.
	again := postPaid(t, srv, payer, "k")
	if again.status != http.StatusOK || !again.replayed || again.settlement != nil {
		t.Errorf("second retry: %d, replayed %v, settlement %+v; want the kept answer, not settled", again.status, again.replayed, again.settlement)
	}
	if n := rec.Calls.Load(); n != 2 {
		t.Errorf("the worker ran %d times after the second retry, want 2", n)
	}
}

// TestHandler_paidAnswerRefusedByGateIsReleased: on a gated route, the
// gate refuses a paid validate's answer. The payer's retry with the same
// Idempotency-Key and a new proof runs the work and the gate again, and
// the new proof is settled once the gate delivers.
func TestHandler_paidAnswerRefusedByGateIsReleased(t *testing.T) {
	fac := &evm.Facilitator{}
	gate := &switchGate{}
	srv, rec := newReleaseServer(t, fac, &x402.DeliveryGate{Check: gate.check})
	payer := newWallet(t)

	gate.refusing.Store(true)
	if got := postPaid(t, srv, payer, "k"); got.status != http.StatusBadGateway {
		t.Fatalf("refused call: %d %s, want 502", got.status, got.body)
	}
	gate.refusing.Store(false)
	got := postPaid(t, srv, payer, "k")
	if got.status != http.StatusOK || got.replayed || got.settlement == nil || !got.settlement.Success {
		t.Errorf("retry with a new proof: %d, replayed %v, settlement %+v; want 200, run anew and settled", got.status, got.replayed, got.settlement)
	}
	if n := gate.checks.Load(); n != 2 {
		t.Errorf("the gate checked %d answers, want 2", n)
	}
	if n := len(fac.Settlements()); n != 1 {
		t.Errorf("%d settlements, want 1 (the retry's)", n)
	}
	if n := rec.Calls.Load(); n != 2 {
		t.Errorf("the worker ran %d times, want 2", n)
	}
}

// TestHandler_unsettledAnswersLeaveThePaidBudget: eight cheap wallets
// each make a paid call whose settlement fails, more than the paid budget
// of the idempotency store holds. None of those answers is kept, so an
// honest payer is then served and settled, not refused 503.
func TestHandler_unsettledAnswersLeaveThePaidBudget(t *testing.T) {
	fac := &switchSettler{Facilitator: &evm.Facilitator{}}
	store := &router.MemoryIdempotencyStore{MaxEntries: 4, MaxEntriesPerCaller: 2}
	srv, rec := newReleaseServer(t, fac, nil, router.WithIdempotency(store, 0))

	fac.failing.Store(true)
	for i := range 8 {
		if got := postPaid(t, srv, newWallet(t), "k"); got.status != http.StatusPaymentRequired {
			t.Fatalf("cheap wallet %d: %d %s, want 402", i, got.status, got.body)
		}
	}
	if n := store.Len(); n != 0 {
		t.Errorf("the store keeps %d entries after the failed settlements, want 0", n)
	}
	fac.failing.Store(false)
	got := postPaid(t, srv, newWallet(t), "k")
	if got.status != http.StatusOK || got.settlement == nil || !got.settlement.Success {
		t.Errorf("honest payer: %d %s; want 200 settled", got.status, got.body)
	}
	if n := rec.Calls.Load(); n != 9 {
		t.Errorf("the worker ran %d times, want 9", n)
	}
}
