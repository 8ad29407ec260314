package trust_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"testing"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/trust"
)

// TestClient_VerifyReceiptAsIssued: Client.VerifyReceipt sends the
// receipt as the bytes it is given, so that the service checks those and
// answers as_issued for a receipt as issued, even one holding characters
// an HTML-escaping JSON writer would spell otherwise (<, >, &, U+2028),
// and the original input as given, which the receipt hashes.
func TestClient_VerifyReceiptAsIssued(t *testing.T) {
	signer, err := receipt.NewEd25519Signer(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{5}, ed25519.SeedSize)))
	if err != nil {
		t.Fatal(err)
	}
	store := &receipt.MemStore{}
	is := &receipt.Issuer{Signer: signer, Store: store}
	input := json.RawMessage(`"is 2 < 3 && 4 > 3?"`)
	rec, err := is.Issue(context.Background(), receipt.Params{
		Request: receipt.Request{Mode: receipt.DeliveryInline, Include: receipt.Include{InputHash: true}},
		Mode:    "validation", TaskType: "a<b&c", Status: "VALID", Confidence: 0.9,
		Reasons: []string{"2 < 3\u2028holds"}, Input: input, Owner: "alice",
	})
	if err != nil {
		t.Fatal(err)
	}
	v, err := receipt.NewVerifier([]receipt.PublicKey{signer.Public()})
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer(t, &fakeCaller{}, trust.WithReceiptEndpoints(store, v))
	res, err := newClient(t, srv.URL).VerifyReceipt(context.Background(), &receipt.VerifyRequest{Receipt: rec.JSON, Input: input})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Valid || !res.AsIssued {
		t.Errorf("VerifyReceipt(the receipt as issued) = valid %v, as_issued %v (checks %+v), want both", res.Valid, res.AsIssued, res.Checks)
	}
}
