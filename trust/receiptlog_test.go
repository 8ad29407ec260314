package trust_test

import (
	"context"
	"crypto/ed25519"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// TestHandler_receiptLog issues receipts through the Service and checks
// the log endpoints over loopback: the checkpoint, an inclusion proof
// that checks offline against the receipt as fetched, consistency
// between two checkpoints, and the credentials, visibility and bad-input
// answers.
func TestHandler_receiptLog(t *testing.T) {
	_, priv, _ := ed25519.GenerateKey(nil)
	signer, err := receipt.NewEd25519Signer(priv)
	if err != nil {
		t.Fatal(err)
	}
	store := &receipt.MemStore{}
	svc, err := trust.New(unanimous{}, trust.WithSigningKey(priv), trust.WithReceiptStore(store))
	if err != nil {
		t.Fatal(err)
	}
	l, err := receipt.NewLog("example.com/vouch/receipts", signer, store)
	if err != nil {
		t.Fatal(err)
	}
	v, err := receipt.NewVerifier([]receipt.PublicKey{signer.Public()})
	if err != nil {
		t.Fatal(err)
	}
	srv := newServer(t, svc, trust.WithAuthenticator(router.KeyAuthenticator(map[string]string{testKey: "alice", "bob-key": "bob"})),
		trust.WithReceiptEndpoints(store, v), trust.WithReceiptLog(l))
	get := func(key, path string) (int, []byte) {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, srv.URL+path, nil)
		if key != "" {
			req.Header.Set("Authorization", "Bearer "+key)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, body
	}
	issue := func(c *trust.Client) string {
		t.Helper()
		req := validationRequest()
		req.Receipt = receipt.Request{Mode: receipt.DeliveryDetached}
		resp, err := c.Call(context.Background(), req)
		if err != nil {
			t.Fatal(err)
		}
		var ref receipt.Ref
		if err := json.Unmarshal(resp.Receipt, &ref); err != nil {
			t.Fatal(err)
		}
		return ref.ReceiptID
	}
	logState := func() receipt.Checkpoint {
		t.Helper()
		status, body := get(testKey, receipt.LogPath)
		var lr receipt.LogResponse
		if err := json.Unmarshal(body, &lr); status != 200 || err != nil {
			t.Fatalf("GET /api/v4/log = %d %s (%v)", status, body, err)
		}
		if lr.Origin != l.Origin() || lr.VerifierKey != l.VerifierKey() {
			t.Errorf("log %+v, want origin %s and key %s", lr, l.Origin(), l.VerifierKey())
		}
		cp, err := receipt.OpenCheckpoint([]byte(lr.Checkpoint), lr.VerifierKey)
		if err != nil {
			t.Fatal(err)
		}
		return cp
	}
	alice, bob := newClient(t, srv.URL), newClient(t, srv.URL, trust.WithAPIKey("bob-key"))

	first := issue(alice)
	cp1 := logState()
	bobs := issue(bob)
	issue(alice)
	cp3 := logState()
	if cp1.Size != 1 || cp3.Size != 3 {
		t.Fatalf("log sizes %d then %d, want 1 then 3", cp1.Size, cp3.Size)
	}

	// Alice's receipt is proved into the tree of the checkpoint served
	// with the proof, over the bytes she fetches.
	status, body := get(testKey, receipt.ReceiptPath+first+receipt.ProofSuffix)
	var pr receipt.ProofResponse
	if err := json.Unmarshal(body, &pr); status != 200 || err != nil {
		t.Fatalf("GET proof = %d %s (%v)", status, body, err)
	}
	if !strings.Contains(string(body), `"inclusion_proof":["`) {
		t.Errorf("proof body %s: want base64 hashes in inclusion_proof", body)
	}
	pcp, err := receipt.OpenCheckpoint([]byte(pr.Checkpoint), l.VerifierKey())
	if err != nil || pcp.Size != pr.TreeSize || pr.LogIndex != 0 {
		t.Fatalf("proof checkpoint %+v (%v), tree_size %d, log_index %d", pcp, err, pr.TreeSize, pr.LogIndex)
	}
	data, err := alice.FetchReceipt(context.Background(), first)
	if err != nil {
		t.Fatal(err)
	}
	if err := receipt.CheckInclusion(data, pr.LogIndex, pr.InclusionProof, pcp); err != nil {
		t.Errorf("the fetched receipt is not in the log: %v", err)
	}

	// The log only grew from cp1 to cp3.
	status, body = get(testKey, receipt.ConsistencyPath+"?first=1&second=3")
	var cr receipt.ConsistencyResponse
	if err := json.Unmarshal(body, &cr); status != 200 || err != nil {
		t.Fatalf("GET consistency = %d %s (%v)", status, body, err)
	}
	if err := receipt.CheckConsistency(cp1, cp3, cr.Proof); err != nil {
		t.Errorf("CheckConsistency(1 -> 3) = %v", err)
	}

	// Bob gets the same 404 for Alice's receipt's proof as for the
	// receipt itself and for an unknown id.
	s1, b1 := get("bob-key", receipt.ReceiptPath+first)
	s2, b2 := get("bob-key", receipt.ReceiptPath+first+receipt.ProofSuffix)
	s3, b3 := get("bob-key", receipt.ReceiptPath+"rcpt_aaaaaaaaaaaaaaaaaaaaaaaaaa"+receipt.ProofSuffix)
	if s1 != 404 || s2 != 404 || s3 != 404 || problemDetail(t, b1) != problemDetail(t, b2) || problemDetail(t, b2) != problemDetail(t, b3) {
		t.Errorf("another caller's proof: %d %s / %d %s / %d %s, want one 404", s1, b1, s2, b2, s3, b3)
	}
	if s, _ := get("bob-key", receipt.ReceiptPath+bobs+receipt.ProofSuffix); s != 200 {
		t.Errorf("Bob's own proof = %d, want 200", s)
	}
	for _, path := range []string{receipt.LogPath, receipt.ConsistencyPath + "?first=1&second=2", receipt.ReceiptPath + first + receipt.ProofSuffix} {
		if s, _ := get("", path); s != 401 {
			t.Errorf("GET %s without credentials = %d, want 401", path, s)
		}
	}
	for query, field := range map[string]string{
		"":                          "first",
		"?second=2":                 "first",
		"?first=1":                  "second",
		"?first=x&second=2":         "first",
		"?first=1&second=-2":        "second",
		"?first=1&second=9":         "second",
		"?first=3&second=2":         "first",
		"?first=1&first=1&second=2": "first",
	} {
		s, b := get(testKey, receipt.ConsistencyPath+query)
		var p trust.Error
		if err := json.Unmarshal(b, &p); s != 400 || err != nil || len(p.Errors) == 0 || p.Errors[0].Field != field {
			t.Errorf("consistency%s = %d %s, want 400 naming %s", query, s, b, field)
		}
	}

	// Without WithReceiptLog the log is not served.
	bare := newServer(t, svc, trust.WithReceiptEndpoints(store, v))
	resp, err := http.Get(bare.URL + receipt.LogPath)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != 404 {
		t.Errorf("GET /api/v4/log without WithReceiptLog = %d, want 404", resp.StatusCode)
	}
}

func problemDetail(t *testing.T, body []byte) string {
	t.Helper()
	var p trust.Error
	if err := json.Unmarshal(body, &p); err != nil {
		t.Fatalf("%s: %v", body, err)
	}
	return string(p.Code) + ": " + p.Detail
}
