package main

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// Two servers on one database: a trust call paid in escrow, captured by
// the first, whose answer is lost, is retried with the same proof (without
// a payment id) on the second, which answers it from the database's
// outcome store: the same verdict, trace id and payment response, not
// 402 "already used".
func TestRun_trustCallInEscrowRetryAcrossServers(t *testing.T) {
	dbURL := databaseURL(t)
	schema := freshSchema(t, dbURL)
	// One signing key, which authorizes the escrow's operations: the
	// servers offer the same terms.
	args := []string{"-database-url", dbURL, "-database-schema", schema, "-signing-key", filepath.Join(t.TempDir(), "key.json")}
	a, _, _ := startServerBanner(t, args...)
	b, _, _ := startServerBanner(t, args...)
	payer, err := evm.NewPayer(strings.Repeat("49", 32))
	if err != nil {
		t.Fatal(err)
	}
	rec := &proofRecorder{base: http.DefaultTransport}
	c := &http.Client{Transport: &x402.Transport{Payer: payer, Policy: x402.Policy{Schemes: []string{x402.SchemeAuthCapture}}, Base: rec}}
	body, _ := json.Marshal(map[string]any{"mode": "validation", "policy": trust.PolicyFast, "task": map[string]any{"type": "tool_output", "claimed_result": "17 * 3 = 51"}})
	type answer struct {
		Status   int
		Verdict  trust.Status
		TraceID  string
		Response string
	}
	read := func(resp *http.Response) answer {
		t.Helper()
		defer resp.Body.Close()
		data, _ := io.ReadAll(resp.Body)
		var out trust.Response
		json.Unmarshal(data, &out)
		return answer{resp.StatusCode, out.Status, out.TraceID, resp.Header.Get(x402.HeaderPaymentResponse)}
	}
	resp, err := c.Post(a.base+trust.X402CallPath, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	first := read(resp)
	if first.Status != http.StatusOK || first.Verdict != trust.StatusValid || first.Response == "" {
		t.Fatalf("first call: %+v, want a VALID answer with its payment response", first)
	}
	// The same proof without its payment id, which would find the first
	// answer in the payment id store: the retry finds it by its proof.
	proof, err := x402.DecodePaymentPayload(rec.proof())
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := proof.Extensions["payment-identifier"]; !ok {
		t.Fatalf("the proof has no payment id: %v", proof.Extensions)
	}
	delete(proof.Extensions, "payment-identifier")
	header, err := x402.EncodeHeader(proof)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, b.base+trust.X402CallPath, bytes.NewReader(body))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set(x402.HeaderPaymentSignature, header)
	retry, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(first, read(retry)); diff != "" {
		t.Errorf("the retry on the other server (-first +retry):\n%s", diff)
	}
}
