package router_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// TestHandler_paidLookupKeepsPayersAnswers: on a route that settles
// before the work, the middleware asks the handler for an answer kept
// under a new payment's Idempotency-Key before settling it. A payer
// holding as many paid answers as the memory store keeps for one caller
// sends a call under a new key whose settlement then fails: nothing new
// is kept, so the payer's answers all stay, and its retry of the first
// call, with the first proof, is delivered from the store without
// running or settling again. The lookup used to reserve the new key,
// dropping the payer's oldest answer to make room for an entry that was
// then released, and the retry was refused 402.
func TestHandler_paidLookupKeepsPayersAnswers(t *testing.T) {
	offer, err := evm.USDC("base-sepolia", "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", "$0.001")
	if err != nil {
		t.Fatal(err)
	}
	fac := &switchSettler{Facilitator: &evm.Facilitator{}}
	mw, err := x402.Middleware(x402.MiddlewareConfig{
		Facilitator: fac,
		Routes:      map[string]x402.Price{"POST /api/v2/x402/validate": {Accepts: []x402.PaymentRequirements{offer}, SettleBefore: true}},
	})
	if err != nil {
		t.Fatal(err)
	}
	rec := routertest.NewRecorder(routertest.Verdict(router.VerdictValid))
	h, err := router.NewHandler(newEngine(t, routertest.Sessions(1, 1, rec)), router.WithX402(mw),
		router.WithIdempotency(&router.MemoryIdempotencyStore{MaxEntriesPerCaller: 2}, 0))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	payer := newWallet(t)
	body, err := json.Marshal(validateV2(1))
	if err != nil {
		t.Fatal(err)
	}
	type answer struct {
		Status   int
		Replayed bool
		Body     string
	}
	// post sends the call under key with a proof of its own, or proof.
	post := func(key, proof string) (answer, string) {
		t.Helper()
		if proof == "" {
			pr, err := payer.Pay(t.Context(), offer)
			if err != nil {
				t.Fatal(err)
			}
			if proof, err = x402.EncodeHeader(x402.PaymentPayload{X402Version: 2, Accepted: offer, Payload: pr.Payload}); err != nil {
				t.Fatal(err)
			}
		}
		req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/api/v2/x402/validate", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", key)
		req.Header.Set(x402.HeaderPaymentSignature, proof)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil {
			t.Fatal(err)
		}
		a := answer{Status: resp.StatusCode, Replayed: resp.Header.Get(router.HeaderIdempotentReplayed) == "true"}
		if a.Status == http.StatusOK {
			a.Body = string(b)
		}
		return a, proof
	}
	first, proof := post("k1", "")
	if second, _ := post("k2", ""); first.Status != http.StatusOK || second.Status != http.StatusOK {
		t.Fatalf("the two calls: %d, %d; want 200", first.Status, second.Status)
	}
	fac.failing.Store(true)
	if third, _ := post("k3", ""); third.Status != http.StatusPaymentRequired {
		t.Fatalf("the call whose settlement fails: %d, want 402", third.Status)
	}
	fac.failing.Store(false)
	retry, _ := post("k1", proof)
	want := answer{Status: http.StatusOK, Replayed: true, Body: first.Body}
	if diff := cmp.Diff(want, retry); diff != "" {
		t.Errorf("the retry of the first call with its proof (-want +got):\n%s", diff)
	}
	if n := len(rec.Jobs()); n != 2 {
		t.Errorf("%d worker runs, want 2", n)
	}
	if n := len(fac.Settlements()); n != 2 {
		t.Errorf("%d settlements, want 2", n)
	}
}
