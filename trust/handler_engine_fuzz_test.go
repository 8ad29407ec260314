package trust_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/vouchkit/vouch/internal/fuzzjson"
	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// engineFuzzWorker answers every job as a healthy worker does: a number
// for a delegation, VALID for a validation, TRUE for a fact check.
func engineFuzzWorker() router.Worker {
	return router.WorkerFunc(func(_ context.Context, job *router.Job) (*router.Result, error) {
		switch job.Kind {
		case router.KindDelegate:
			return &router.Result{Output: 42, Confidence: 0.9, Steps: []router.Step{{Description: "fuzz"}}}, nil
		case router.KindFactcheck:
			return &router.Result{Verdict: router.VerdictTrue, Confidence: 0.9, Reasons: []string{"fuzz"}}, nil
		}
		return &router.Result{Verdict: router.VerdictValid, Confidence: 0.9, Reasons: []string{"fuzz"}}, nil
	})
}

type allowEvery struct{}

func (allowEvery) Allow(context.Context, string, time.Time) (bool, time.Duration, error) {
	return true, 0, nil
}

// FuzzEngineTrust sends arbitrary bodies to the POST routes of the trust
// Handler over trust.New on a real router Engine of five healthy
// sessions, with signed receipts and the receipt endpoints: the bodies
// reach the tiers, adaptive's stop, numeric delegations, receipts and
// feedback, not a fake Caller.
func FuzzEngineTrust(f *testing.F) {
	paths := []string{trust.CallPath, "/api/v4/trial/trust", "/api/v4/x402/trust", trust.FeedbackPath, "/api/v4/verify_receipt"}
	seeds := []struct {
		path uint8
		body string
	}{
		{0, `{"mode":"validation","policy":"safe","task":{"type":"summary","claimed_result":"x","input":"in","spec":"s"}}`},
		{0, `{"mode":"arbitration","policy":"oracle","task":{"claimed_result":{"a":1},"dispute_context":"late"},"context":{"agent":"a"},"metadata":{"m":1}}`},
		{0, `{"mode":"delegation","policy":"adaptive","task":{"type":"qa","input":"How many apples?","answer":"number","tolerance":{"absolute":0.5}}}`},
		{0, `{"mode":"delegation","policy":"fast","task":{"input":{"kind":"array","items":[1]},"spec":"do it"},"delegation":{"agreement":"exact"}}`},
		{0, `{"mode":"delegation","policy":"safe","task":{"input":"x"},"delegation":{"agreement":"judged"},"context":{"a":1}}`},
		{0, `{"mode":"validation","policy":"adaptive","task":{"claimed_result":"x"},"receipt":{"mode":"inline","include":{"consensus_snapshot":true,"policy_snapshot":true,"input_hash":true,"output_hash":true,"router_trace_refs":true},"ttl":"7d","visibility":"shared","counterparties":["bob"]}}`},
		{0, `{"mode":"validation","policy":"fast","task":{"claimed_result":1e300,"input":"i"},"receipt":{"mode":"detached","visibility":"public","ttl":"1000d","include":{"input_hash":true,"output_hash":true}}}`},
		{1, `{"mode":"validation","policy":"safe","task":{"claimed_result":"x"},"receipt":{"mode":"detached"}}`},
		{2, `{"mode":"delegation","policy":"oracle","task":{"input":"x"},"receipt":{"mode":"none"}}`},
		{3, `{"trace_id":"4bf92f3577b34da6a3ce929d0e0e4736","right":false}`},
		{3, `{"receipt_id":"rcpt_aaaaaaaaaaaaaaaaaaaaaaaaaa","verdict":"INVALID"}`},
		{4, `{"receipt":{"receipt_id":"rcpt_x"},"input":"i","output":"o"}`},
	}
	h, issuer := engineTrustHandler(f)
	rec, err := issuer.Issue(context.Background(), receipt.Params{
		Request: receipt.Request{Mode: receipt.DeliveryDetached, Include: receipt.Include{InputHash: true, OutputHash: true}},
		Mode:    "validation", TaskType: "summary", Status: "VALID", Confidence: 0.9, Reasons: []string{"matches"},
		Input: "The Eiffel Tower is in Paris.", Output: "The tower is in Paris.", Owner: "alice",
	})
	if err != nil {
		f.Fatal(err)
	}
	seeds = append(seeds,
		struct {
			path uint8
			body string
		}{4, `{"receipt":` + string(rec.JSON) + `,"input":"The Eiffel Tower is in Paris.","output":"The tower is in Paris."}`},
		struct {
			path uint8
			body string
		}{4, `{"receipt":` + string(rec.JSON) + `}`},
		struct {
			path uint8
			body string
		}{3, `{"receipt_id":"` + rec.Receipt.ReceiptID + `","right":true}`})
	for _, s := range seeds {
		f.Add(s.path, []byte(s.body))
	}
	f.Fuzz(func(t *testing.T, route uint8, body []byte) {
		path := paths[int(route)%len(paths)]
		r := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body))
		r.Header.Set("Content-Type", "application/json")
		r.Header.Set("Authorization", "Bearer k")
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if testing.Verbose() {
			t.Logf("%s %d %.300s", path, w.Code, w.Body)
		}
		fuzzjson.CheckAnswer(t, w, path, body)
	})
}

// engineTrustHandler returns the trust Handler of FuzzEngineTrust and its
// receipt issuer.
func engineTrustHandler(t testing.TB) (http.Handler, *receipt.Issuer) {
	var workers []router.Worker
	for range 5 {
		workers = append(workers, engineFuzzWorker())
	}
	return engineTrustHandlerOver(t, routertest.Sessions(1, 3, workers...))
}

// engineTrustHandlerOver is engineTrustHandler over the sessions ss.
func engineTrustHandlerOver(t testing.TB, ss []router.Session) (http.Handler, *receipt.Issuer) {
	e, err := router.NewEngine(ss)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := receipt.NewEd25519Signer(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, ed25519.SeedSize)))
	if err != nil {
		t.Fatal(err)
	}
	store := &receipt.MemStore{}
	issuer := &receipt.Issuer{Signer: signer, Store: store}
	svc, err := trust.New(e, trust.WithReceipts(issuer), trust.WithSignedReceipts())
	if err != nil {
		t.Fatal(err)
	}
	v, err := receipt.NewVerifier([]receipt.PublicKey{signer.Public()})
	if err != nil {
		t.Fatal(err)
	}
	h, err := trust.NewHandler(svc, trust.WithAuthenticator(router.KeyAuthenticator(map[string]string{"k": "alice"})),
		trust.WithMaxBodyBytes(1<<16), trust.WithRateLimiter(allowEvery{}),
		trust.WithX402(func(next http.Handler) http.Handler { return next }),
		trust.WithReceiptEndpoints(store, v))
	if err != nil {
		t.Fatal(err)
	}
	return h, issuer
}
