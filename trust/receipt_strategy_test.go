package trust_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// withoutStrategy serves h, deleting consensus.strategy from each answer
// that has one: the consensus block as the public router's documentation
// shows it (replicas, agreement, verdicts, confidence).
func withoutStrategy(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		body := rec.Body.Bytes()
		var answer map[string]any
		if json.Unmarshal(body, &answer) == nil {
			if c, ok := answer["consensus"].(map[string]any); ok {
				delete(c, "strategy")
				body, _ = json.Marshal(answer)
			}
		}
		for k, v := range rec.Header() {
			w.Header()[k] = v
		}
		w.Header().Del("Content-Length")
		w.WriteHeader(rec.Code)
		w.Write(body)
	})
}

// TestService_receiptFromRouterWithoutStrategy calls a remote router over
// loopback whose consensus block names no strategy: the receipt's
// consensus snapshot records majority, the version 3 default, as its
// policy snapshot does, instead of failing the call for a receipt that
// could not be issued.
func TestService_receiptFromRouterWithoutStrategy(t *testing.T) {
	w := honest(0.9)
	h, err := router.NewHandler(newEngine(t, w, w, w, w, w), router.WithAuthenticator(router.KeyAuthenticator(map[string]string{"k": "tests"})))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(withoutStrategy(h))
	defer srv.Close()
	c, err := router.NewClient(srv.URL, router.WithAPIKey("k"))
	if err != nil {
		t.Fatal(err)
	}
	signer, err := receipt.NewEd25519Signer(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, ed25519.SeedSize)))
	if err != nil {
		t.Fatal(err)
	}
	s, err := trust.New(c, trust.WithReceipts(&receipt.Issuer{Signer: signer, Store: &receipt.MemStore{}}))
	if err != nil {
		t.Fatal(err)
	}
	req := request(trust.ModeValidation, trust.PolicySafe)
	req.Receipt = receipt.Request{Mode: receipt.DeliveryInline, Include: receipt.Include{ConsensusSnapshot: true, PolicySnapshot: true}}
	resp, err := s.Call(context.Background(), req)
	if err != nil {
		t.Fatalf("Call: %v", err)
	}
	rec, err := receipt.Parse(resp.Receipt)
	if err != nil {
		t.Fatalf("receipt %s: %v", resp.Receipt, err)
	}
	got := []string{rec.ConsensusSnapshot.Strategy, rec.PolicySnapshot.Consensus.Strategy}
	if want := []string{"majority", "majority"}; !cmp.Equal(got, want) {
		t.Errorf("consensus and policy snapshot strategies %v, want %v", got, want)
	}
}
