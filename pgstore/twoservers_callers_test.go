package pgstore_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// Two router servers (A and B) on one database, behind credentials, each
// with the x402 middleware (replay, outcomes, payment ids in pgstore) and
// the idempotency store in pgstore. Alice pays a validate on A with an
// Idempotency-Key; Bob, on B, sends Alice's exact request (her proof, her
// key, her body) under his own credential: he gets 402, not her answer,
// and the worker does not run. Bob then pays his own call under the same
// Idempotency-Key on B: it runs (Alice's key neither answers nor blocks
// him). Alice's retry of her request on B then still gets her answer.
func TestTwoServers_callersApart(t *testing.T) {
	dbs := openDBs(t, 2)
	offer, err := evm.USDC("base-sepolia", "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", "$0.001")
	if err != nil {
		t.Fatal(err)
	}
	rec := routertest.NewRecorder(routertest.Verdict(router.VerdictValid))
	var servers []*httptest.Server
	for _, db := range dbs {
		mw, err := x402.Middleware(x402.MiddlewareConfig{
			Facilitator: &evm.Facilitator{}, Replay: db.Replay(), Outcomes: db.Outcomes(), PaymentIDs: db.PaymentIDs(),
			Routes: map[string]x402.Price{"POST /api/v2/x402/validate": {Accepts: []x402.PaymentRequirements{offer}, PaymentIdentifier: &x402.PaymentIdentifier{}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		engine, err := router.NewEngine(routertest.Sessions(1, 1, rec))
		if err != nil {
			t.Fatal(err)
		}
		h, err := router.NewHandler(engine, router.WithX402(mw), router.WithIdempotency(db.Idempotency(), time.Hour),
			router.WithAuthenticator(router.KeyAuthenticator(map[string]string{"key-alice": "alice", "key-bob": "bob"})))
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(h)
		t.Cleanup(srv.Close)
		servers = append(servers, srv)
	}
	body, _ := json.Marshal(&router.ValidateV2Request{SessionID: 1, ValidateTask: router.ValidateTask{
		RequestID: "req-1",
		Claim:     router.Claim{Type: "summary", Description: "summarize", Output: json.RawMessage(`"a summary"`)},
		Policy:    router.ValidatePolicy{Tier: router.TierSafe, Rules: []string{"consistency"}},
	}})
	payer, _ := evm.NewPayer(testPayerKey)
	// The paid headers Alice's Transport sends.
	var alicePaid http.Header
	capture := func(next http.RoundTripper) http.RoundTripper {
		return roundTripFunc(func(r *http.Request) (*http.Response, error) {
			if r.Header.Get(x402.HeaderPaymentSignature) != "" && r.Header.Get("Authorization") == "Bearer key-alice" {
				alicePaid = r.Header.Clone()
			}
			return next.RoundTrip(r)
		})
	}
	do := func(srv *httptest.Server, h http.Header, pay bool, cred string) (int, string) {
		req, _ := http.NewRequestWithContext(context.Background(), http.MethodPost, srv.URL+"/api/v2/x402/validate", bytes.NewReader(body))
		if h != nil {
			req.Header = h.Clone()
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer "+cred)
		req.Header.Set(x402.HeaderIdempotencyKey, "key-1")
		client := http.DefaultClient
		if pay {
			client = &http.Client{Transport: &x402.Transport{Payer: payer, Base: capture(http.DefaultTransport)}}
		}
		resp, err := client.Do(req)
		if err != nil {
			return -1, err.Error()
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		return resp.StatusCode, string(b)
	}
	status, aliceAnswer := do(servers[0], nil, true, "key-alice")
	if status != http.StatusOK {
		t.Fatalf("Alice on A = %d %s", status, aliceAnswer)
	}
	if alicePaid == nil {
		t.Fatal("Alice's paid request not seen")
	}
	if n := rec.Calls.Load(); n != 1 {
		t.Fatalf("worker ran %d, want 1", n)
	}
	// Bob sends Alice's exact paid request under his credential, on B.
	h := alicePaid.Clone()
	status, got := do(servers[1], h, false, "key-bob")
	t.Logf("Bob with Alice's proof on B: %d %.160s", status, got)
	if status == http.StatusOK {
		t.Errorf("Bob got an answer with Alice's proof: %.200s", got)
	}
	if n := rec.Calls.Load(); n != 1 {
		t.Errorf("worker ran %d after Bob's replay, want 1", n)
	}
	// Bob's own paid call under the same Idempotency-Key, on B.
	status, got = do(servers[1], nil, true, "key-bob")
	t.Logf("Bob's own call on B: %d %.160s", status, got)
	if status != http.StatusOK {
		t.Errorf("Bob's own call under the same key = %d, want 200", status)
	}
	// Alice's retry on B gets her answer, not Bob's nor a refusal.
	status, got = do(servers[1], alicePaid, false, "key-alice")
	t.Logf("Alice's retry on B: %d %.160s", status, got)
	if status != http.StatusOK || got != aliceAnswer {
		t.Errorf("Alice's retry on B = %d %.200s, want her first answer", status, got)
	}
}

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(r *http.Request) (*http.Response, error) { return f(r) }
