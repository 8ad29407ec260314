package pgstore_test

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
	"github.com/vouchkit/vouch/x402/x402test"
)

func TestOutcomeStore(t *testing.T) {
	x402test.TestOutcomeStore(t, func(t *testing.T) x402.OutcomeStore { return openDB(t).Outcomes() })
}

// An outcome kept by one server is found by another on the database,
// and a second Keep on it replaces it for both.
func TestOutcomeStore_acrossServers(t *testing.T) {
	dbs := openDBs(t, 2)
	a, b := dbs[0].Outcomes(), dbs[1].Outcomes()
	ctx := context.Background()
	until := t0.Add(time.Hour)
	pending := x402.Outcome{Request: "req", Payer: "0xa11ce", PendingCapture: "0x01", Usage: &x402.Usage{Amount: 7, MaxAmount: 10},
		Response: x402.BufferedResponse{Status: http.StatusOK, Header: http.Header{"Content-Type": {"text/plain"}}, Body: []byte("Paris")}}
	if err := a.Keep(ctx, "k", pending, until); err != nil {
		t.Fatal(err)
	}
	wantOutcome := func(what string, want x402.Outcome) {
		t.Helper()
		got, ok, err := b.Lookup(ctx, "k", t0)
		if err != nil || !ok {
			t.Fatalf("%s: Lookup on the other server = found %v, %v", what, ok, err)
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s: Lookup on the other server (-want +got):\n%s", what, diff)
		}
	}
	wantOutcome("pending", pending)
	delivered := pending
	delivered.PendingCapture, delivered.Usage, delivered.Delivered = "", nil, true
	delivered.Settlement = &x402.SettleResponse{Success: true, Transaction: "0x02", Network: "eip155:84532"}
	if err := b.Keep(ctx, "k", delivered, until); err != nil {
		t.Fatal(err)
	}
	wantOutcome("delivered", delivered)
}

// DeleteExpired (and with it DB.DeleteExpired) removes the outcomes
// expired at now, and only those.
func TestOutcomeStore_DeleteExpired(t *testing.T) {
	db := openDB(t)
	s := db.Outcomes()
	ctx := context.Background()
	for i, key := range []string{"a", "b", "c"} {
		if err := s.Keep(ctx, key, x402.Outcome{Request: key}, t0.Add(time.Duration(i+1)*time.Hour)); err != nil {
			t.Fatalf("Keep(%s) = %v", key, err)
		}
	}
	if n, err := s.DeleteExpired(ctx, t0.Add(2*time.Hour)); err != nil || n != 2 {
		t.Errorf("DeleteExpired(+2h) = %d, %v; want 2", n, err)
	}
	if _, ok, err := s.Lookup(ctx, "c", t0); err != nil || !ok {
		t.Errorf("Lookup(c) after DeleteExpired(+2h) = found %v, %v; want it kept", ok, err)
	}
	if n, err := db.DeleteExpired(ctx, t0.Add(3*time.Hour)); err != nil || n != 1 {
		t.Errorf("DB.DeleteExpired(+3h) = %d, %v; want the outcome left", n, err)
	}
}

// captureTimesOut passes everything to the facilitator but captures,
// which it answers with an error, sending nothing, as a facilitator
// that timed out.
type captureTimesOut struct{ x402.Facilitator }

func (f captureTimesOut) Settle(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.SettleResponse, error) {
	if strings.Contains(string(p.Payload), `"type":"capture"`) {
		return nil, errors.New("facilitator timed out")
	}
	return f.Facilitator.Settle(ctx, p, r)
}

// Two servers on one database, with an "auth-capture" route whose
// ledger, replay and outcome stores are the database's: the first holds
// the payment and runs the handler, and its capture goes unanswered, so
// that it answers 402 and keeps the answer for the retry; the retry with
// the same proof reaches the second, which captures the payment and
// delivers the answer it bought. The handler runs once, and the payer
// pays once.
func TestOutcomeStore_pendingCaptureRetryOnAnotherServer(t *testing.T) {
	dbs := openDBs(t, 2)
	bed := x402test.NewEscrowBed(t)
	var runs atomic.Int32
	var proof atomic.Value
	urls := make([]string, 2)
	for i, db := range dbs {
		var fac x402.Facilitator = bed.Facilitator
		if i == 0 {
			fac = captureTimesOut{fac}
		}
		mw, err := x402.Middleware(x402.MiddlewareConfig{Facilitator: fac, Replay: db.Replay(), Outcomes: db.Outcomes(),
			Escrow: &x402.EscrowConfig{Authorizer: bed.Authorizer, Ledger: db.Escrow()},
			Routes: map[string]x402.Price{"POST /paid": {Accepts: []x402.PaymentRequirements{bed.Offer}}}})
		if err != nil {
			t.Fatal(err)
		}
		h := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			runs.Add(1)
			io.WriteString(w, "Paris")
		}))
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if v := r.Header.Get(x402.HeaderPaymentSignature); v != "" {
				proof.Store(v)
			}
			h.ServeHTTP(w, r)
		}))
		t.Cleanup(srv.Close)
		urls[i] = srv.URL
	}
	before := bed.Balances()
	payer, _ := evm.NewPayer(testPayerKey)
	first, err := (&http.Client{Transport: &x402.Transport{Payer: payer, Policy: x402.Policy{Schemes: []string{x402.SchemeAuthCapture}}}}).Post(urls[0]+"/paid", "text/plain", strings.NewReader("q"))
	if err == nil { // the Transport reports the 402 after its payment as an error
		first.Body.Close()
		t.Fatalf("first use: status %d, want 402 (the capture went unanswered)", first.StatusCode)
	}
	if _, ok := proof.Load().(string); !ok {
		t.Fatalf("first use: %v, and no proof was sent", err)
	}
	req, _ := http.NewRequest(http.MethodPost, urls[1]+"/paid", strings.NewReader("q"))
	req.Header.Set(x402.HeaderPaymentSignature, proof.Load().(string))
	retry, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(retry.Body)
	retry.Body.Close()
	sr, _ := x402.DecodeSettleResponse(retry.Header.Get(x402.HeaderPaymentResponse)) // none on a 402 "already used"
	e, _ := x402.EscrowFromSettlement(sr)
	got := []any{retry.StatusCode, string(body), e.State, e.Captured, runs.Load(), bed.Balances()}
	want := []any{http.StatusOK, "Paris", x402.EscrowCaptured, "50000", int32(1), before.Plus(-x402test.EscrowHoldAmount, 0, x402test.EscrowHoldAmount)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the retry on the second server (-want +got):\n%s", diff)
	}
}

// An outcome written before header values kept their bytes, as
// json.Marshal of the Outcome wrote it, reads as it did then.
func TestOutcomeStore_oldRecord(t *testing.T) {
	db := openDB(t)
	ctx := t.Context()
	now := time.Now()
	old := x402.Outcome{Request: "req-1", Payer: "0xpayer", Delivered: true,
		Response: x402.BufferedResponse{Status: http.StatusOK,
			Header: http.Header{"Content-Type": {"text/plain"}, "X-Note": {"caf\ufffd", ""}, "X-Nil": nil}, Body: []byte("Paris")},
		Settlement: &x402.SettleResponse{Success: true, Payer: "0xpayer", Transaction: "0xtx", Network: "eip155:84532"}}
	raw, err := json.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool().Exec(ctx, `INSERT INTO vouch_x402_outcomes (key, outcome, until) VALUES ($1, $2, $3)`,
		"key-1", raw, now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	got, ok, err := db.Outcomes().Lookup(ctx, "key-1", now)
	if err != nil || !ok {
		t.Fatalf("Lookup of an old record = %v, %v; want the outcome", ok, err)
	}
	if diff := cmp.Diff(old, got); diff != "" {
		t.Errorf("old record read (-written +read):\n%s", diff)
	}
}

// settleFails is a facilitator that does not answer a settlement.
type settleFails struct{ x402.Facilitator }

func (f settleFails) Settle(context.Context, *x402.PaymentPayload, x402.PaymentRequirements) (*x402.SettleResponse, error) {
	return nil, errors.New("facilitator timed out")
}

// Two servers on one database, with a gated "exact" route whose replay
// and outcome stores are the database's: the first keeps the answer its
// gate passed and fails to settle it; the retry of the same proof on
// the second settles it and gets the answer, the handler run once.
func TestOutcomeStore_settlingRetryOnAnotherServer(t *testing.T) {
	dbs := openDBs(t, 2)
	fac := &evm.Facilitator{}
	offer, err := evm.USDC("eip155:84532", "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", "$0.001")
	if err != nil {
		t.Fatal(err)
	}
	deliver := func(context.Context, *http.Request, []byte, *x402.BufferedResponse) x402.Delivery {
		return x402.Delivery{Deliver: true}
	}
	var runs atomic.Int32
	urls := make([]string, 2)
	for i, db := range dbs {
		var f x402.Facilitator = fac
		if i == 0 {
			f = settleFails{fac}
		}
		mw, err := x402.Middleware(x402.MiddlewareConfig{Facilitator: f, Replay: db.Replay(), Outcomes: db.Outcomes(),
			Routes: map[string]x402.Price{"POST /paid": {Accepts: []x402.PaymentRequirements{offer}, Gate: &x402.DeliveryGate{Check: deliver}}}})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			runs.Add(1)
			io.WriteString(w, "Paris")
		})))
		t.Cleanup(srv.Close)
		urls[i] = srv.URL
	}
	proof, err := x402.EncodeHeader(signedPayment(t, offer))
	if err != nil {
		t.Fatal(err)
	}
	var got []any
	for _, u := range urls {
		req, _ := http.NewRequest(http.MethodPost, u+"/paid", strings.NewReader("q"))
		req.Header.Set(x402.HeaderPaymentSignature, proof)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		sr, _ := x402.DecodeSettleResponse(resp.Header.Get(x402.HeaderPaymentResponse))
		got = append(got, resp.StatusCode, strings.HasPrefix(string(body), "Paris"), sr != nil && sr.Success)
	}
	got = append(got, len(fac.Settlements()), runs.Load())
	want := []any{http.StatusPaymentRequired, false, false, http.StatusOK, true, true, 1, int32(1)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("first use, then its retry on the second server, settlements and runs (-want +got):\n%s", diff)
	}
}
