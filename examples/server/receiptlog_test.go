package main

import (
	"context"
	"encoding/json"
	"io"
	"net/http"
	"testing"

	"github.com/vouchkit/vouch/receipt"
)

// TestRun_receiptLog issues a receipt on the server and checks its
// inclusion proof against the log's checkpoint, signed by the banner's key
// under -log-origin.
func TestRun_receiptLog(t *testing.T) {
	t.Parallel()
	b, _, _ := startServerBanner(t, "-log-origin", "example.com/vouch/test")
	ctx := context.Background()
	resp, err := trustClient(t, b.base, defaultAPIKey).Call(ctx, validation(receipt.Request{Mode: receipt.DeliveryInline}))
	if err != nil {
		t.Fatal(err)
	}
	issued, err := receipt.Parse(resp.Receipt)
	if err != nil {
		t.Fatal(err)
	}
	get := func(path string, v any) {
		t.Helper()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, b.base+path, nil)
		req.Header.Set("Authorization", "Bearer "+defaultAPIKey)
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		body, _ := io.ReadAll(res.Body)
		if res.StatusCode != 200 || json.Unmarshal(body, v) != nil {
			t.Fatalf("GET %s = %d %s", path, res.StatusCode, body)
		}
	}
	var lr receipt.LogResponse
	get(receipt.LogPath, &lr)
	key, err := receipt.ParseEd25519Key(b.issuer)
	if err != nil {
		t.Fatal(err)
	}
	vkey, err := receipt.LogVerifierKey("example.com/vouch/test", key)
	if err != nil || lr.VerifierKey != vkey || lr.Origin != "example.com/vouch/test" {
		t.Fatalf("log %+v, want origin example.com/vouch/test and key %s (%v)", lr, vkey, err)
	}
	var pr receipt.ProofResponse
	get(receipt.ReceiptPath+issued.ReceiptID+receipt.ProofSuffix, &pr)
	cp, err := receipt.OpenCheckpoint([]byte(pr.Checkpoint), vkey)
	if err != nil {
		t.Fatal(err)
	}
	if err := receipt.CheckInclusion(resp.Receipt, pr.LogIndex, pr.InclusionProof, cp); err != nil {
		t.Errorf("the inline receipt is not in the server's log: %v", err)
	}
}
