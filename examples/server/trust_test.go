package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// validation is a trust validation of a true claim, with a receipt
// delivered as rr asks.
func validation(rr receipt.Request) *trust.Request {
	return &trust.Request{
		Mode:    trust.ModeValidation,
		Policy:  trust.PolicySafe,
		Task:    trust.Task{Type: "tool_output", ClaimedResult: json.RawMessage(`"17 * 3 = 51"`)},
		Receipt: rr,
	}
}

func trustClient(t *testing.T, base, key string, opts ...trust.ClientOption) *trust.Client {
	t.Helper()
	c, err := trust.NewClient(base, append([]trust.ClientOption{trust.WithAPIKey(key), trust.WithRetry(router.RetryPolicy{})}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// wantNotFound fails unless err is the 404 problem of a receipt the caller
// may not see.
func wantNotFound(t *testing.T, who string, err error) {
	t.Helper()
	var terr *trust.Error
	if !errors.As(err, &terr) || terr.Status != http.StatusNotFound {
		t.Errorf("%s fetched the receipt: %v, want 404", who, err)
	}
}

func TestRun_trustReceipt(t *testing.T) {
	t.Parallel()
	b, _, _ := startServerBanner(t, "-integration", "acme=acme-key", "-integration", "zed=zed-key")
	ctx := context.Background()
	demo := trustClient(t, b.base, defaultAPIKey)
	key, err := receipt.ParseEd25519Key(b.issuer)
	if err != nil {
		t.Fatalf("banner's key %q: %v", b.issuer, err)
	}
	verifier, err := receipt.NewVerifier([]receipt.PublicKey{key})
	if err != nil {
		t.Fatal(err)
	}

	// A shared inline receipt, readable by its owner and by acme only.
	req := validation(receipt.Request{Mode: receipt.DeliveryInline, Visibility: receipt.VisibilityShared,
		Counterparties: []string{"acme"}, Include: receipt.Include{OutputHash: true, PolicySnapshot: true, ConsensusSnapshot: true}})
	resp, err := demo.Call(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	issued, err := receipt.Parse(resp.Receipt)
	if err != nil || resp.Status != trust.StatusValid || issued.Decision.Status != "VALID" || issued.Signing == nil || issued.Signing.Issuer != b.issuer {
		t.Fatalf("trust call = %s, receipt %+v (%v), want VALID with a receipt signed by %s", resp.Status, issued, err, b.issuer)
	}
	for _, c := range []struct {
		who string
		c   *trust.Client
	}{{"demo (owner)", demo}, {"acme (counterparty)", trustClient(t, b.base, "acme-key")}} {
		got, err := c.c.FetchReceipt(ctx, issued.ReceiptID)
		if err != nil || !bytes.Equal(got, resp.Receipt) {
			t.Errorf("%s fetched %s (%v), want the inline receipt's bytes %s", c.who, got, err, resp.Receipt)
		}
	}
	_, err = trustClient(t, b.base, "zed-key").FetchReceipt(ctx, issued.ReceiptID)
	wantNotFound(t, "zed, not a counterparty,", err)

	// The server checks it, and so does anyone with the printed key.
	vr, err := demo.VerifyReceipt(ctx, &receipt.VerifyRequest{Receipt: resp.Receipt, Output: req.Task.ClaimedResult})
	if err != nil || !vr.Valid || vr.Issuer != b.issuer || len(vr.Checks) != 6 {
		t.Errorf("verify_receipt = %+v (%v), want valid, by %s, with six checks", vr, err, b.issuer)
	}
	res, err := verifier.Verify(resp.Receipt, receipt.Originals{Output: req.Task.ClaimedResult}, time.Time{})
	if c, _ := res.Check(receipt.CheckOutputHash); err != nil || c.Status != receipt.CheckPassed {
		t.Errorf("Verify with the banner's key: %v, output hash %+v; want every check passed", err, c)
	}
	tampered := bytes.Replace(resp.Receipt, []byte(`"VALID"`), []byte(`"INVALID"`), 1)
	vr, err = demo.VerifyReceipt(ctx, &receipt.VerifyRequest{Receipt: tampered})
	if c := checkNamed(vr, receipt.CheckSignature); err != nil || vr.Valid || c.Code != "bad_signature" {
		t.Errorf("verify_receipt of a tampered receipt = %+v (%v), want invalid with bad_signature", vr, err)
	}

	// A detached private receipt: a reference in the response, the
	// receipt for its owner alone.
	resp, err = demo.Call(ctx, validation(receipt.Request{Mode: receipt.DeliveryDetached}))
	if err != nil {
		t.Fatal(err)
	}
	var ref receipt.Ref
	if err := json.Unmarshal(resp.Receipt, &ref); err != nil || !strings.HasPrefix(ref.ReceiptID, receipt.IDPrefix) || ref.Visibility != receipt.VisibilityPrivate {
		t.Fatalf("detached receipt member %s (%v), want a private reference", resp.Receipt, err)
	}
	data, err := demo.FetchReceipt(ctx, ref.ReceiptID)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := verifier.Verify(data, receipt.Originals{}, time.Time{}); err != nil {
		t.Errorf("Verify of the detached receipt: %v", err)
	}
	_, err = trustClient(t, b.base, "acme-key").FetchReceipt(ctx, ref.ReceiptID)
	wantNotFound(t, "acme, for a private receipt,", err)
}

func checkNamed(vr *receipt.VerifyResponse, name receipt.CheckName) receipt.Check {
	if vr != nil {
		for _, c := range vr.Checks {
			if c.Name == name {
				return c
			}
		}
	}
	return receipt.Check{}
}

func TestRun_receiptsSurviveRestart(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	args := []string{"-receipts", filepath.Join(dir, "receipts.db"), "-signing-key", filepath.Join(dir, "signing.key")}
	ctx := context.Background()

	first, _, stop := startServerBanner(t, args...)
	if !strings.Contains(first.text, "(created "+filepath.Join(dir, "signing.key")+")") ||
		!strings.Contains(first.text, "receipts in "+filepath.Join(dir, "receipts.db")) {
		t.Errorf("first banner does not say the key was created and where receipts are kept:\n%s", first.text)
	}
	resp, err := trustClient(t, first.base, defaultAPIKey).Call(ctx, validation(receipt.Request{Mode: receipt.DeliveryInline}))
	if err != nil {
		t.Fatal(err)
	}
	issued, err := receipt.Parse(resp.Receipt)
	if err != nil {
		t.Fatal(err)
	}
	if err := stop(); err != nil {
		t.Fatalf("first server: %v", err)
	}

	second, _, _ := startServerBanner(t, args...)
	if second.issuer != first.issuer || second.base == "" {
		t.Errorf("restarted server signs with %s, want the key of the file, %s", second.issuer, first.issuer)
	}
	c := trustClient(t, second.base, defaultAPIKey)
	got, err := c.FetchReceipt(ctx, issued.ReceiptID)
	if err != nil || !bytes.Equal(got, resp.Receipt) {
		t.Fatalf("after the restart the receipt is %s (%v), want %s", got, err, resp.Receipt)
	}
	if vr, err := c.VerifyReceipt(ctx, &receipt.VerifyRequest{Receipt: got}); err != nil || !vr.Valid {
		t.Errorf("after the restart verify_receipt = %+v (%v), want valid", vr, err)
	}
}

func TestRun_trustTrialAndX402(t *testing.T) {
	t.Parallel()
	base, log, _ := startServer(t, "-trial-burst", "2", "-trial-rate", "0.01")
	ctx := context.Background()

	// Trial: the burst, then 429 with Retry-After; the router's trial
	// routes keep a bucket of their own when there is no database.
	trial := trustClient(t, base, "", trust.WithClientVariant(router.VariantTrial))
	for i := range 2 {
		if resp, err := trial.Call(ctx, validation(receipt.Request{})); err != nil || resp.Status != trust.StatusValid {
			t.Fatalf("trial call %d = %+v (%v), want VALID", i, resp, err)
		}
	}
	_, err := trial.Call(ctx, validation(receipt.Request{}))
	var terr *trust.Error
	if !errors.As(err, &terr) || terr.Status != http.StatusTooManyRequests {
		t.Errorf("third trial call: %v, want 429", err)
	}
	rresp, err := http.Post(base+"/api/v2/trial/validate", "application/json",
		strings.NewReader(`{"session_id":1,"claim":{"type":"tool_output","output":"1 + 1 = 2"}}`))
	if err != nil {
		t.Fatal(err)
	}
	rresp.Body.Close()
	if rresp.StatusCode != http.StatusOK {
		t.Errorf("router trial call after the trust trial ran out = %d, want 200 (its own bucket)", rresp.StatusCode)
	}

	// x402: paid at the trust price, settled once.
	payer, err := evm.NewPayer(strings.Repeat("47", 32))
	if err != nil {
		t.Fatal(err)
	}
	hc := &http.Client{Transport: &x402.Transport{Payer: payer, Policy: x402.Policy{MaxAmount: 10000}}}
	paid := trustClient(t, base, "", trust.WithClientVariant(router.VariantX402), trust.WithHTTPClient(hc))
	resp, err := paid.Call(ctx, validation(receipt.Request{Mode: receipt.DeliveryInline}))
	if err != nil || resp.Status != trust.StatusValid || len(resp.Receipt) == 0 {
		t.Fatalf("paid trust call = %+v (%v), want VALID with an inline receipt", resp, err)
	}
	if n := strings.Count(log.String(), `msg="x402: settled"`); n != 1 {
		t.Errorf("%d settlements logged, want 1", n)
	}
}
