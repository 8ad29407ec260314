package pgstore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// testPayerKey is a key made up for the tests; it holds nothing on any
// network.
const testPayerKey = "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"

// countingPayer counts the proofs an evm.Payer signs.
type countingPayer struct {
	*evm.Payer
	n atomic.Int32
}

func (p *countingPayer) Pay(ctx context.Context, o x402.PaymentRequirements) (x402.Proof, error) {
	p.n.Add(1)
	return p.Payer.Pay(ctx, o)
}

// TestReplayStore_paidAnswerLostAcrossServers runs two router servers,
// each with its own x402 middleware and offline facilitator, sharing the
// replay and idempotency stores of one database. A paid validate v2 is
// served and settled by the first, whose answer is lost (TCP reset); the
// client's retry, with the same proof and key, reaches the second, which
// delivers the stored answer without running the worker or settling
// again. The same proof with another key is then refused.
func TestReplayStore_paidAnswerLostAcrossServers(t *testing.T) {
	dbs := openDBs(t, 2)
	offer, err := evm.USDC("base-sepolia", "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", "$0.001")
	if err != nil {
		t.Fatal(err)
	}
	rec := routertest.NewRecorder(routertest.Verdict(router.VerdictValid))
	facs := []*evm.Facilitator{{}, {}}
	servers := make([]http.Handler, 2)
	for i, db := range dbs {
		mw, err := x402.Middleware(x402.MiddlewareConfig{
			Facilitator: facs[i],
			Replay:      db.Replay(),
			Routes:      map[string]x402.Price{"POST /api/v2/x402/validate": {Accepts: []x402.PaymentRequirements{offer}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		engine, err := router.NewEngine(routertest.Sessions(1, 1, rec))
		if err != nil {
			t.Fatal(err)
		}
		servers[i], err = router.NewHandler(engine, router.WithX402(mw), router.WithIdempotency(db.Idempotency(), time.Hour))
		if err != nil {
			t.Fatal(err)
		}
	}
	// The unpaid attempt and the paid one go to the first server, whose
	// answer to the paid one is lost; every later request goes to the
	// second.
	var attempts atomic.Int32
	var proof, idemKey atomic.Value
	front := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch attempts.Add(1) {
		case 1:
			servers[0].ServeHTTP(w, r)
		case 2:
			proof.Store(r.Header.Get(x402.HeaderPaymentSignature))
			idemKey.Store(r.Header.Get(x402.HeaderIdempotencyKey))
			servers[0].ServeHTTP(httptest.NewRecorder(), r)
			conn, _, err := http.NewResponseController(w).Hijack()
			if err != nil {
				panic(err)
			}
			conn.(*net.TCPConn).SetLinger(0)
			conn.Close()
		default:
			servers[1].ServeHTTP(w, r)
		}
	})
	srv := httptest.NewServer(front)
	defer srv.Close()

	p, err := evm.NewPayer(testPayerKey)
	if err != nil {
		t.Fatal(err)
	}
	payer := &countingPayer{Payer: p}
	c, err := router.NewClient(srv.URL,
		router.WithClientVariant(router.VariantX402),
		router.WithHTTPClient(&http.Client{Transport: &x402.Transport{Payer: payer}}),
		router.WithRetry(router.RetryPolicy{Max: 3, WaitMin: time.Millisecond, WaitMax: 2 * time.Millisecond}))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	req := &router.ValidateV2Request{SessionID: 1, ValidateTask: router.ValidateTask{
		RequestID: "req-1",
		Claim:     router.Claim{Type: "summary", Description: "summarize", Output: json.RawMessage(`"a summary"`)},
		Policy:    router.ValidatePolicy{Tier: router.TierSafe, Rules: []string{"consistency"}},
	}}
	got, err := c.ValidateV2(ctx, req)
	if err != nil || got.Verdict != router.VerdictValid {
		t.Fatalf("ValidateV2 = %+v, %v; want VALID", got, err)
	}
	if n := attempts.Load(); n != 3 {
		t.Errorf("%d requests reached the servers, want 3 (unpaid, paid and lost, retried)", n)
	}
	if n := rec.Calls.Load(); n != 1 {
		t.Errorf("the worker ran %d times, want 1", n)
	}
	if n0, n1 := len(facs[0].Settlements()), len(facs[1].Settlements()); n0 != 1 || n1 != 0 {
		t.Errorf("settlements: %d on the first server, %d on the second; want 1 and 0", n0, n1)
	}
	if n := payer.n.Load(); n != 1 {
		t.Errorf("the payer signed %d proofs, want 1", n)
	}

	// The same proof under another key is refused by the second server.
	body, err := json.Marshal(req)
	if err != nil {
		t.Fatal(err)
	}
	r, err := http.NewRequestWithContext(ctx, http.MethodPost, srv.URL+"/api/v2/x402/validate", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	r.Header.Set("Content-Type", "application/json")
	r.Header.Set(x402.HeaderPaymentSignature, proof.Load().(string))
	r.Header.Set(x402.HeaderIdempotencyKey, idemKey.Load().(string)+"-other")
	resp, err := http.DefaultClient.Do(r)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusPaymentRequired {
		t.Errorf("the proof under another key = %d, want 402", resp.StatusCode)
	}
	if n := rec.Calls.Load(); n != 1 {
		t.Errorf("the worker ran %d times after the refused repeat, want 1", n)
	}
}

// failSwitch makes the offline facilitator's settlements fail, and a
// delivery gate refuse, while it is set.
type failSwitch struct {
	*evm.Facilitator
	settleFails, gateRefuses atomic.Bool
	checks                   atomic.Int32
}

func (f *failSwitch) Settle(ctx context.Context, p *x402.PaymentPayload, o x402.PaymentRequirements) (*x402.SettleResponse, error) {
	if f.settleFails.Load() {
		return &x402.SettleResponse{ErrorReason: "insufficient_funds", Network: o.Network}, nil
	}
	return f.Facilitator.Settle(ctx, p, o)
}

func (f *failSwitch) check(context.Context, *http.Request, []byte, *x402.BufferedResponse) x402.Delivery {
	f.checks.Add(1)
	return x402.Delivery{Deliver: !f.gateRefuses.Load()}
}

// TestIdempotencyStore_unpaidAnswerReleased: with the idempotency and
// replay stores in the database, a paid validate whose settlement fails,
// or whose answer a gate refuses, leaves no answer kept: the payer's
// retry with the same Idempotency-Key and a new proof runs the work (and
// the gate) again and settles the new proof.
func TestIdempotencyStore_unpaidAnswerReleased(t *testing.T) {
	for _, tt := range []struct {
		name  string
		gated bool
	}{{"settlement fails", false}, {"gate refuses", true}} {
		t.Run(tt.name, func(t *testing.T) {
			db := openDB(t)
			offer, err := evm.USDC("base-sepolia", "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", "$0.001")
			if err != nil {
				t.Fatal(err)
			}
			fac := &failSwitch{Facilitator: &evm.Facilitator{}}
			price := x402.Price{Accepts: []x402.PaymentRequirements{offer}}
			if tt.gated {
				price.Gate = &x402.DeliveryGate{Check: fac.check}
			}
			mw, err := x402.Middleware(x402.MiddlewareConfig{Facilitator: fac, Replay: db.Replay(),
				Routes: map[string]x402.Price{"POST /api/v2/x402/validate": price}})
			if err != nil {
				t.Fatal(err)
			}
			rec := routertest.NewRecorder(routertest.Verdict(router.VerdictValid))
			engine, err := router.NewEngine(routertest.Sessions(1, 1, rec))
			if err != nil {
				t.Fatal(err)
			}
			h, err := router.NewHandler(engine, router.WithX402(mw), router.WithIdempotency(db.Idempotency(), time.Hour))
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(h)
			defer srv.Close()
			payer, err := evm.NewPayer(testPayerKey)
			if err != nil {
				t.Fatal(err)
			}
			body, err := json.Marshal(&router.ValidateV2Request{SessionID: 1, ValidateTask: router.ValidateTask{
				RequestID: "req-1",
				Claim:     router.Claim{Type: "summary", Description: "summarize", Output: json.RawMessage(`"a summary"`)},
				Policy:    router.ValidatePolicy{Tier: router.TierSafe, Rules: []string{"consistency"}},
			}})
			if err != nil {
				t.Fatal(err)
			}
			// post pays through a new Transport, which signs a new proof.
			post := func() (int, *http.Response) {
				req, err := http.NewRequestWithContext(t.Context(), http.MethodPost, srv.URL+"/api/v2/x402/validate", bytes.NewReader(body))
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Content-Type", "application/json")
				req.Header.Set(x402.HeaderIdempotencyKey, "k")
				resp, err := (&http.Client{Transport: &x402.Transport{Payer: payer}}).Do(req)
				if err != nil {
					return http.StatusPaymentRequired, nil // refused: the Transport reports the 402
				}
				resp.Body.Close()
				return resp.StatusCode, resp
			}
			fac.settleFails.Store(!tt.gated)
			fac.gateRefuses.Store(tt.gated)
			if status, _ := post(); status == http.StatusOK {
				t.Fatalf("the unpaid call answered 200")
			}
			fac.settleFails.Store(false)
			fac.gateRefuses.Store(false)
			status, resp := post()
			if status != http.StatusOK || resp.Header.Get(router.HeaderIdempotentReplayed) != "" || resp.Header.Get(x402.HeaderPaymentResponse) == "" {
				t.Fatalf("retry with a new proof: %d; want 200, run anew and settled", status)
			}
			if n := rec.Calls.Load(); n != 2 {
				t.Errorf("the worker ran %d times, want 2", n)
			}
			if n := len(fac.Settlements()); n != 1 {
				t.Errorf("%d settlements, want 1 (the retry's)", n)
			}
			if tt.gated && fac.checks.Load() != 2 {
				t.Errorf("the gate checked %d answers, want 2", fac.checks.Load())
			}
		})
	}
}
