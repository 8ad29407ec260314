package trust_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// issued returns a store holding one signed receipt owned by "alice", the
// receipt, and a verifier that knows the signing key.
func issued(t *testing.T) (*receipt.MemStore, *receipt.Issued, *receipt.Verifier) {
	t.Helper()
	signer, err := receipt.NewEd25519Signer(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, ed25519.SeedSize)))
	if err != nil {
		t.Fatal(err)
	}
	store := &receipt.MemStore{}
	is := &receipt.Issuer{Signer: signer, Store: store}
	rec, err := is.Issue(context.Background(), receipt.Params{
		Request: receipt.Request{Mode: receipt.DeliveryDetached, Include: receipt.Include{InputHash: true, OutputHash: true}},
		Mode:    "validation", TaskType: "summary", Status: "VALID", Confidence: 0.9, Reasons: []string{"matches"},
		Input: "The Eiffel Tower is in Paris.", Output: "The tower is in Paris.",
		Owner: "alice",
	})
	if err != nil {
		t.Fatalf("Issue: %v", err)
	}
	v, err := receipt.NewVerifier([]receipt.PublicKey{signer.Public()})
	if err != nil {
		t.Fatal(err)
	}
	return store, rec, v
}

func TestClient_FetchReceipt(t *testing.T) {
	store, rec, v := issued(t)
	srv := newServer(t, &fakeCaller{}, trust.WithAuthenticator(router.KeyAuthenticator(map[string]string{testKey: "alice", "bob-key": "bob"})),
		trust.WithReceiptEndpoints(store, v))
	id := rec.Receipt.ReceiptID

	got, err := newClient(t, srv.URL).FetchReceipt(context.Background(), id)
	if err != nil {
		t.Fatalf("owner's fetch: %v", err)
	}
	if !bytes.Equal(got, rec.JSON) {
		t.Errorf("fetched %s, want the bytes as issued %s", got, rec.JSON)
	}

	tests := []struct {
		name       string
		key, id    string
		wantStatus int
	}{
		{"another caller", "bob-key", id, http.StatusNotFound},
		{"unknown id", testKey, "rcpt_nope", http.StatusNotFound},
		{"no credentials", "", id, http.StatusUnauthorized},
	}
	for _, tt := range tests {
		_, err := newClient(t, srv.URL, trust.WithAPIKey(tt.key)).FetchReceipt(context.Background(), tt.id)
		var p *trust.Error
		if !errors.As(err, &p) || p.Status != tt.wantStatus || p.RequestID == "" {
			t.Errorf("%s: %v, want a %d *trust.Error with a request id", tt.name, err, tt.wantStatus)
		}
	}
	if _, err := newClient(t, srv.URL).FetchReceipt(context.Background(), ""); err == nil {
		t.Error("empty id: no error")
	}

	// Without WithReceiptEndpoints the paths are not served.
	bare := newServer(t, &fakeCaller{})
	_, err = newClient(t, bare.URL).FetchReceipt(context.Background(), id)
	var p *trust.Error
	if !errors.As(err, &p) || p.Status != http.StatusNotFound || p.Code != "not_found" {
		t.Errorf("without receipt endpoints: %v, want a 404 not_found", err)
	}
}

func TestClient_VerifyReceipt(t *testing.T) {
	store, rec, v := issued(t)
	srv := newServer(t, &fakeCaller{}, trust.WithReceiptEndpoints(store, v))
	c := newClient(t, srv.URL)

	res, err := c.VerifyReceipt(context.Background(), &receipt.VerifyRequest{
		Receipt: rec.JSON, Input: json.RawMessage(`"The Eiffel Tower is in Paris."`),
	})
	if err != nil {
		t.Fatal(err)
	}
	if !res.Valid || res.ReceiptID != rec.Receipt.ReceiptID || len(res.Checks) == 0 {
		t.Errorf("verify the issued receipt: %+v, want valid with its id and checks", res)
	}

	tampered := bytes.Replace(rec.JSON, []byte(`"VALID"`), []byte(`"INVALID"`), 1)
	if bytes.Equal(tampered, rec.JSON) {
		t.Fatal("test receipt has no status to tamper with")
	}
	res, err = c.VerifyReceipt(context.Background(), &receipt.VerifyRequest{Receipt: tampered})
	if err != nil {
		t.Fatal(err)
	}
	if sig, ok := findCheck(res.Checks, receipt.CheckSignature); res.Valid || !ok || sig.Status != receipt.CheckFailed {
		t.Errorf("verify a tampered receipt: %+v, want invalid with a failed signature check", res)
	}

	_, err = c.VerifyReceipt(context.Background(), &receipt.VerifyRequest{})
	var p *trust.Error
	if !errors.As(err, &p) || p.Status != http.StatusBadRequest || len(p.Errors) == 0 || p.Errors[0].Field != "receipt" {
		t.Errorf("no receipt: %v, want a 400 naming the field receipt", err)
	}
	if _, err := newClient(t, srv.URL, trust.WithAPIKey("")).VerifyReceipt(context.Background(), &receipt.VerifyRequest{Receipt: rec.JSON}); !errors.As(err, &p) || p.Status != http.StatusUnauthorized {
		t.Errorf("no credentials: %v, want 401", err)
	}

	noVerifier := newServer(t, &fakeCaller{}, trust.WithReceiptEndpoints(store, nil))
	if _, err := newClient(t, noVerifier.URL).VerifyReceipt(context.Background(), &receipt.VerifyRequest{Receipt: rec.JSON}); !errors.As(err, &p) || p.Status != http.StatusServiceUnavailable {
		t.Errorf("no verifier: %v, want 503", err)
	}
}

func findCheck(checks []receipt.Check, name receipt.CheckName) (receipt.Check, bool) {
	for _, c := range checks {
		if c.Name == name {
			return c, true
		}
	}
	return receipt.Check{}, false
}

// A Service behind the Handler issues receipts owned by the authenticated
// caller, who alone can fetch them; an anonymous trial caller's receipt is
// owned by its address and cannot be fetched by anyone with a key.
func TestHandler_receiptOwner(t *testing.T) {
	store := &receipt.MemStore{}
	svc, err := trust.New(unanimous{}, trust.WithReceipts(&receipt.Issuer{Store: store}))
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer(t, svc, trust.WithAuthenticator(router.KeyAuthenticator(map[string]string{testKey: "alice", "bob-key": "bob"})),
		trust.WithReceiptEndpoints(store, nil))
	detached := func() *trust.Request {
		req := validationRequest()
		req.Receipt = receipt.Request{Mode: receipt.DeliveryDetached}
		return req
	}
	receiptID := func(c *trust.Client, req *trust.Request) string {
		t.Helper()
		resp, err := c.Call(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		var ref receipt.Ref
		if err := json.Unmarshal(resp.Receipt, &ref); err != nil || ref.ReceiptID == "" {
			t.Fatalf("receipt member %s: want a detached reference (%v)", resp.Receipt, err)
		}
		return ref.ReceiptID
	}
	alice, bob := newClient(t, srv.URL), newClient(t, srv.URL, trust.WithAPIKey("bob-key"))

	id := receiptID(alice, detached())
	data, err := alice.FetchReceipt(context.Background(), id)
	if err != nil {
		t.Fatalf("owner's fetch: %v", err)
	}
	if r, err := receipt.Parse(data); err != nil || r.ReceiptID != id {
		t.Errorf("fetched receipt %s (%v), want receipt %s", data, err, id)
	}
	var p *trust.Error
	if _, err := bob.FetchReceipt(context.Background(), id); !errors.As(err, &p) || p.Status != http.StatusNotFound {
		t.Errorf("another caller's fetch: %v, want 404", err)
	}

	shared := detached() // a trial caller's private one would be fetched by no one
	shared.Receipt.Visibility, shared.Receipt.Counterparties = receipt.VisibilityShared, []string{"carol"}
	anon := receiptID(newClient(t, srv.URL, trust.WithAPIKey(""), trust.WithClientVariant(router.VariantTrial)), shared)
	rec, err := store.Get(context.Background(), anon, time.Now())
	if err != nil || rec.Owner != "trial:ip:127.0.0.1" {
		t.Errorf("anonymous trial receipt owner %q (%v), want trial:ip:127.0.0.1", rec.Owner, err)
	}
	if _, err := alice.FetchReceipt(context.Background(), anon); !errors.As(err, &p) || p.Status != http.StatusNotFound {
		t.Errorf("fetching an anonymous caller's receipt: %v, want 404", err)
	}
}

// POST verify_receipt takes its body as the trust call does: a
// Content-Type other than JSON in UTF-8, or none, is a 415, and a query
// parameter a 400 naming it, before the body is read.
func TestHandler_verifyReceiptBody(t *testing.T) {
	store, rec, v := issued(t)
	srv := newServer(t, &fakeCaller{}, trust.WithReceiptEndpoints(store, v))
	body := `{"receipt":` + string(rec.JSON) + `}`
	post := func(path, contentType string) int {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, srv.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+testKey)
		if contentType != "" {
			req.Header.Set("Content-Type", contentType)
		}
		resp, err := srv.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	for _, tc := range []struct {
		path, contentType string
		want              int
	}{
		{receipt.VerifyPath, "application/json", http.StatusOK},
		{receipt.VerifyPath, "application/json; charset=utf-8", http.StatusOK},
		{receipt.VerifyPath, "", http.StatusUnsupportedMediaType},
		{receipt.VerifyPath, "text/plain", http.StatusUnsupportedMediaType},
		{receipt.VerifyPath, "application/json; charset=latin1", http.StatusUnsupportedMediaType},
		{receipt.VerifyPath + "?input=x", "application/json", http.StatusBadRequest},
		{receipt.VerifyPath + "?input=x", "text/plain", http.StatusBadRequest},
	} {
		if got := post(tc.path, tc.contentType); got != tc.want {
			t.Errorf("POST %s with Content-Type %q = %d, want %d", tc.path, tc.contentType, got, tc.want)
		}
	}
}
