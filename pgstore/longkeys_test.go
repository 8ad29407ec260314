package pgstore_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// randomText returns n bytes of base64url text that does not compress.
func randomText(t *testing.T, n int) string {
	t.Helper()
	b := make([]byte, n)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return base64.RawURLEncoding.EncodeToString(b)[:n]
}

// TestStores_longKeys: keys made of what a client sent may be longer
// than a primary key's index holds (about 2,700 bytes): the from or
// nonce of a proof, checked by the facilitator only after the replay
// store has reserved it, and the name a TrialCaller gives a request
// from a header. On the database's stores such a proof was answered 503
// unavailable where the in-memory stores let the facilitator refuse it
// with 402, and such a trial caller got 503 from the trial limit and
// from the idempotency store on every request. Both are now served as
// on the in-memory stores, and long keys that differ only at their end
// are kept apart.
func TestStores_longKeys(t *testing.T) {
	db := openDB(t)

	// A proof whose nonce is 4,000 characters long.
	offer, err := evm.USDC("base-sepolia", "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", "$0.001")
	if err != nil {
		t.Fatal(err)
	}
	payer, err := evm.NewPayer(testPayerKey)
	if err != nil {
		t.Fatal(err)
	}
	proof, err := payer.Pay(context.Background(), offer)
	if err != nil {
		t.Fatal(err)
	}
	payload := strings.Replace(string(proof.Payload), `"nonce":"0x`, `"nonce":"0x`+randomText(t, 4000), 1)
	header, err := x402.EncodeHeader(map[string]any{"x402Version": 2, "accepted": offer, "payload": json.RawMessage(payload)})
	if err != nil {
		t.Fatal(err)
	}
	paid := func(replay x402.ReplayStore) int {
		mw, err := x402.Middleware(x402.MiddlewareConfig{Facilitator: &evm.Facilitator{}, Replay: replay,
			Routes: map[string]x402.Price{"GET /paid": {Accepts: []x402.PaymentRequirements{offer}}}})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "paid for") })))
		defer srv.Close()
		req, err := http.NewRequest(http.MethodGet, srv.URL+"/paid", nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set(x402.HeaderPaymentSignature, header)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return res.StatusCode
	}
	if got := []int{paid(&x402.MemoryReplay{}), paid(db.Replay())}; !cmp.Equal(got, []int{402, 402}) {
		t.Errorf("a proof with a long nonce, replay store in memory and in the database: %v, want 402 both", got)
	}

	// A trial caller named by a 4,000-character session header, with the
	// trial limit and the idempotency store in the database.
	limiter, err := db.TrialLimiter(router.TrialLimit{Rate: 1, Burst: 10})
	if err != nil {
		t.Fatal(err)
	}
	workers := routertest.NewRecorder(routertest.Verdict(router.VerdictValid))
	engine, err := router.NewEngine(routertest.Sessions(1, 3, workers, workers, workers))
	if err != nil {
		t.Fatal(err)
	}
	rh, err := router.NewHandler(engine, router.WithRateLimiter(limiter),
		router.WithTrialCaller(func(r *http.Request) string { return r.Header.Get("X-Session") }),
		router.WithIdempotency(db.Idempotency(), time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(rh)
	defer srv.Close()
	type answer struct {
		Status   int
		Replayed bool
	}
	post := func(session string) answer {
		const validate = `{"session_id":1,"request_id":"r1","claim":{"type":"summary","description":"summarize","output":"a summary"},"policy":{"tier":"safe","rules":["consistency"]}}`
		req, err := http.NewRequest(http.MethodPost, srv.URL+"/api/v2/trial/validate", bytes.NewReader([]byte(validate)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Idempotency-Key", "k1")
		req.Header.Set("X-Session", session)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, res.Body)
		res.Body.Close()
		return answer{res.StatusCode, res.Header.Get(router.HeaderIdempotentReplayed) == "true"}
	}
	session := randomText(t, 4000)
	got := []answer{post(session), post(session), post(session[:3999] + "x")}
	want := []answer{{200, false}, {200, true}, {200, false}}
	if session[3999] == 'x' {
		want[2] = answer{200, true}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("a long trial caller's call, its retry, and another long caller's call (-want +got):\n%s", diff)
	}

	// Straight to the replay store: long keys that differ at their end.
	now := time.Now()
	long := randomText(t, 5000)
	var reserved []bool
	for _, key := range []string{long, long, long[:4999] + "\x00", long + "y"} {
		ok, err := db.Replay().Reserve(context.Background(), key, now, now.Add(time.Hour))
		if err != nil {
			t.Fatalf("Reserve of a key of %d bytes: %v", len(key), err)
		}
		reserved = append(reserved, ok)
	}
	if diff := cmp.Diff([]bool{true, false, true, true}, reserved); diff != "" {
		t.Errorf("Reserve of long keys (-want +got):\n%s", diff)
	}
}
