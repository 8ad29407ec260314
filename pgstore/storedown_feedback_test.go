package pgstore_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// TestReceiptStore_databaseDownFeedbackIsUnavailable: a report by
// receipt_id (POST /api/v4/feedback) to a trust service whose receipts
// are in a database that went away is answered 503 unavailable, as
// docs/INTERFACE.md says of a store out of reach, and as a client
// retries, not 500 internal error.
func TestReceiptStore_databaseDownFeedbackIsUnavailable(t *testing.T) {
	db, proxy := openBehindProxy(t)
	book, err := reputation.New(new(reputation.Memory), reputation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	valid := routertest.Verdict(router.VerdictValid)
	engine, err := router.NewEngine(routertest.Sessions(1, 3, valid, valid, valid), router.WithReputation(book))
	if err != nil {
		t.Fatal(err)
	}
	signer := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{9}, ed25519.SeedSize))
	svc, err := trust.New(engine, trust.WithSigningKey(signer), trust.WithReceiptStore(db.Receipts()), trust.WithoutExams())
	if err != nil {
		t.Fatal(err)
	}
	h, err := trust.NewHandler(svc, trust.WithAuthenticator(router.KeyAuthenticator(map[string]string{"ka": "alice"})))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	defer srv.Close()
	alice, err := trust.NewClient(srv.URL, trust.WithAPIKey("ka"), trust.WithRetry(router.RetryPolicy{}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	req := &trust.Request{Mode: trust.ModeValidation, Policy: trust.PolicySafe, Receipt: receipt.Inline(),
		Task: trust.Task{Type: "summary", Input: router.NewStringInput("Paris is in France."), ClaimedResult: json.RawMessage(`"Paris is French."`)}}
	resp, err := alice.Call(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	r, err := receipt.Parse(resp.Receipt)
	if err != nil {
		t.Fatal(err)
	}

	proxy.Stop()
	type answer struct {
		Status int
		Code   problem.Code
	}
	var got answer
	var p *problem.Details
	if err := alice.Feedback(ctx, r.ReceiptID, false); !errors.As(err, &p) {
		t.Fatalf("report by receipt id, the database down: %v (%T), want a problem", err, err)
	}
	got = answer{p.Status, p.Code}
	if diff := cmp.Diff(answer{503, problem.CodeUnavailable}, got); diff != "" {
		t.Errorf("report by receipt id, the database down (-want +got):\n%s", diff)
	}
}
