package trust_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"io"
	"net/http"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// TestHandler_inlineReceiptAsIssued: the inline receipt of an answer over
// HTTP is the receipt's bytes as issued, the ones GET
// /api/v4/receipt/{id} returns and the log holds, even when it holds
// characters an HTML-escaping JSON writer would spell otherwise (<, >,
// &, U+2028): a client that keeps the member it received keeps the
// signed bytes, and verifies them as issued.
func TestHandler_inlineReceiptAsIssued(t *testing.T) {
	priv := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{3}, ed25519.SeedSize))
	worker := router.WorkerFunc(func(context.Context, *router.Job) (*router.Result, error) {
		return &router.Result{Verdict: router.VerdictValid, Confidence: 0.9, Reasons: []string{"2 < 3 && 4 > 3\u2028so it holds"}}, nil
	})
	workers := routertest.NewRecorder(worker)
	store := &receipt.MemStore{}
	svc, err := trust.New(newEngine(t, workers, workers, workers), trust.WithSigningKey(priv), trust.WithReceiptStore(store))
	if err != nil {
		t.Fatal(err)
	}
	v, err := receipt.NewVerifier([]receipt.PublicKey{receipt.Ed25519Key(priv.Public().(ed25519.PublicKey))})
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer(t, svc, trust.WithReceiptEndpoints(store, v))

	do := func(method, path, body string) []byte {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL+path, bytes.NewReader([]byte(body)))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+testKey)
		if body != "" {
			req.Header.Set("Content-Type", "application/json")
		}
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		data, err := io.ReadAll(res.Body)
		if err != nil || res.StatusCode != http.StatusOK {
			t.Fatalf("%s %s: %d %s (%v)", method, path, res.StatusCode, data, err)
		}
		return data
	}
	answer := do(http.MethodPost, trust.CallPath,
		`{"mode":"validation","policy":"fast","task":{"type":"a<b&c","input":"2+2","claimed_result":"4"},"receipt":{"mode":"inline"}}`)
	var env struct {
		Receipt json.RawMessage `json:"receipt"`
	}
	if err := json.Unmarshal(answer, &env); err != nil {
		t.Fatal(err)
	}
	res, err := v.Verify(env.Receipt, receipt.Originals{}, time.Time{})
	if err != nil {
		t.Fatalf("the inline receipt %s: %v", env.Receipt, err)
	}
	if !res.AsIssued {
		t.Errorf("the inline receipt %s verifies, but not as issued", env.Receipt)
	}
	stored := do(http.MethodGet, receipt.ReceiptPath+res.ReceiptID, "")
	if diff := cmp.Diff(string(stored), string(env.Receipt)); diff != "" {
		t.Errorf("the inline receipt against the stored one (-stored +inline):\n%s", diff)
	}
}
