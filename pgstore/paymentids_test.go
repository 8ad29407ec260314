package pgstore_test

import (
	"encoding/json"
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

func TestPaymentIDStore(t *testing.T) {
	x402test.TestPaymentIDStore(t, func(t *testing.T) x402.PaymentIDStore { return openDB(t).PaymentIDs() })
}

// Two servers on one database, each with its own x402 middleware,
// offline facilitator and the route's payment-identifier extension: a
// call paid on the first, whose response is lost, is retried with the
// same payment id and payment on the second, which answers the first
// response and its PAYMENT-RESPONSE, without running the handler or
// settling again, and never "already used".
func TestPaymentIDStore_retryOnAnotherServer(t *testing.T) {
	dbs := openDBs(t, 2)
	o, err := evm.USDC("base-sepolia", "0x209693Bc6afc0C5328bA36FaF03C514EF312287C", "$0.001")
	if err != nil {
		t.Fatal(err)
	}
	var runs atomic.Int32
	facs := []*countingFacilitator{{}, {}}
	var proof atomic.Value
	urls := make([]string, 2)
	for i, db := range dbs {
		mw, err := x402.Middleware(x402.MiddlewareConfig{Facilitator: facs[i], Replay: db.Replay(), PaymentIDs: db.PaymentIDs(),
			Routes: map[string]x402.Price{"POST /paid": {Accepts: []x402.PaymentRequirements{o}, PaymentIdentifier: &x402.PaymentIdentifier{Required: true}}}})
		if err != nil {
			t.Fatal(err)
		}
		h := mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			runs.Add(1)
			io.WriteString(w, "the answer")
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
	payer, _ := evm.NewPayer(testPayerKey)
	resp, err := (&http.Client{Transport: &x402.Transport{Payer: payer}}).Post(urls[0]+"/paid", "text/plain", strings.NewReader("q"))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	first := resp.Header.Get(x402.HeaderPaymentResponse)
	if resp.StatusCode != http.StatusOK || first == "" {
		t.Fatalf("first call: %d, PAYMENT-RESPONSE %q", resp.StatusCode, first)
	}
	req, _ := http.NewRequest(http.MethodPost, urls[1]+"/paid", strings.NewReader("q"))
	req.Header.Set(x402.HeaderPaymentSignature, proof.Load().(string))
	retry, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(retry.Body)
	retry.Body.Close()
	if retry.StatusCode != http.StatusOK || string(body) != "the answer" || retry.Header.Get(x402.HeaderPaymentResponse) != first {
		t.Errorf("retry on the second server: %d %q, PAYMENT-RESPONSE %q; want the first response", retry.StatusCode, body, retry.Header.Get(x402.HeaderPaymentResponse))
	}
	if settles := facs[0].settled.Load() + facs[1].settled.Load(); runs.Load() != 1 || settles != 1 {
		t.Errorf("the handler ran %d times and %d settles were sent; want 1 and 1", runs.Load(), settles)
	}
}

// A response kept by payment id before header values kept their bytes,
// as json.Marshal of the record wrote it, reads as it did then.
func TestPaymentIDStore_oldRecord(t *testing.T) {
	db := openDB(t)
	ctx := t.Context()
	now := time.Now()
	old := x402.PaymentIDRecord{Request: "req-1", Done: true,
		Response:   x402.BufferedResponse{Status: http.StatusOK, Header: http.Header{"X-Note": {"caf\ufffd", ""}}, Body: []byte("Paris")},
		Settlement: &x402.SettleResponse{Success: true, Transaction: "0xtx", Network: "eip155:84532"}}
	raw, err := json.Marshal(old)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Pool().Exec(ctx, `INSERT INTO vouch_x402_payment_ids (id, request, record, until) VALUES ($1, $2, $3, $4)`,
		"pay_0123456789abcdef", "req-1", raw, now.Add(time.Hour)); err != nil {
		t.Fatal(err)
	}
	got, fresh, err := db.PaymentIDs().Begin(ctx, "pay_0123456789abcdef", "req-1", now, now.Add(time.Hour))
	if err != nil || fresh {
		t.Fatalf("Begin of an old record = %v, %v; want the record", fresh, err)
	}
	if diff := cmp.Diff(old, got); diff != "" {
		t.Errorf("old record read (-written +read):\n%s", diff)
	}
}
