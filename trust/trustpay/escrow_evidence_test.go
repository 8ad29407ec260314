package trustpay_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/trustpay"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// A trust call paid in escrow states its payment in its evidence and its
// receipt: the hold's id and amount and what the verdict commits it to
// (VALID and INVALID capture the price, or the runs launched at
// adaptive; RETRY voids), as the payment response's escrow report then tells. The
// receipt verifies with the member. An unpaid call has none.
func TestChargeRuns_escrowInEvidenceAndReceipt(t *testing.T) {
	key, _ := evm.ParsePrivateKey(authorizerKey)
	operator, _ := evm.ParseAddress(evm.OfflineFacilitatorAddress)
	fixed, err := evm.AuthCaptureUSDC("eip155:84532", seller, "$0.005", operator, key.Address())
	if err != nil {
		t.Fatal(err)
	}
	run, _ := evm.AuthCaptureUSDC("eip155:84532", seller, "$0.001", operator, key.Address())
	pf, err := trustpay.Prices{Fixed: x402.Price{Accepts: []x402.PaymentRequirements{fixed}}, PerRun: x402.Price{Accepts: []x402.PaymentRequirements{run}}}.PriceFunc(trust.X402CallPath)
	if err != nil {
		t.Fatal(err)
	}
	paywall, err := x402.Middleware(x402.MiddlewareConfig{Facilitator: &evm.Escrow{OpenBalance: big.NewInt(openBalance)}, PriceFunc: pf,
		Escrow: &x402.EscrowConfig{Authorizer: evm.ReceiverAuthorizer{Key: key}}})
	if err != nil {
		t.Fatal(err)
	}
	svc := service(t)
	h, err := trust.NewHandler(svc, trust.WithX402(func(next http.Handler) http.Handler {
		return paywall(trustpay.ChargeRuns(next, nil))
	}))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	verifier, err := receipt.NewVerifier([]receipt.PublicKey{receipt.Ed25519Key(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, 32)).Public().(ed25519.PublicKey))})
	if err != nil {
		t.Fatal(err)
	}
	payer, _ := evm.NewPayer(buyerKey)
	c := &http.Client{Transport: &x402.Transport{Payer: payer, Policy: x402.Policy{Schemes: []string{x402.SchemeAuthCapture}}}}

	for _, tc := range []struct {
		policy  trust.Policy
		claim   string
		status  trust.Status
		outcome string
		state   x402.EscrowState
		held    string
		perRun  string
	}{
		{trust.PolicySafe, "Refunds within 30 days.", trust.StatusValid, "capture", x402.EscrowCaptured, "5000", ""},
		{trust.PolicySafe, "Refunds within some days.", trust.StatusInvalid, "capture", x402.EscrowCaptured, "5000", ""},
		{trust.PolicySafe, "unsure", trust.StatusRetry, "void", x402.EscrowVoided, "5000", ""},
		{trust.PolicyAdaptive, "Refunds within some days.", trust.StatusInvalid, "capture", x402.EscrowCaptured, "5000", "1000"},
		{trust.PolicyAdaptive, "Refunds within 30 days.", trust.StatusValid, "capture", x402.EscrowCaptured, "5000", "1000"},
	} {
		name := string(tc.policy) + "/" + string(tc.status)
		body, _ := json.Marshal(trust.Request{Mode: trust.ModeValidation, Policy: tc.policy, Receipt: receipt.Inline(),
			Task: trust.Task{Type: "summary", Input: router.NewStringInput("Refunds within 30 days."), ClaimedResult: trust.JSON(tc.claim)}})
		resp, err := c.Post(srv.URL+trust.X402CallPath, "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		sr, err := x402.SettlementFromResponse(resp)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("%s: %d %s: %v", name, resp.StatusCode, data, err)
		}
		report, ok := x402.EscrowFromSettlement(sr)
		if !ok || report.State != tc.state {
			t.Fatalf("%s: escrow report %+v, %v", name, report, ok)
		}
		var out trust.Response
		if err := json.Unmarshal(data, &out); err != nil {
			t.Fatal(err)
		}
		if out.Status != tc.status {
			t.Fatalf("%s: status %s", name, out.Status)
		}
		capture := "0"
		if tc.outcome == "capture" {
			capture = tc.held
			if tc.perRun != "" {
				capture = strconv.Itoa(1000 * out.Evidence.Launched)
			}
		}
		want := &receipt.Payment{Scheme: x402.SchemeAuthCapture, Network: "eip155:84532", Asset: usdcSepolia, ID: report.ID,
			Held: tc.held, PerRun: tc.perRun, Outcome: tc.outcome, Capture: capture}
		if diff := cmp.Diff(want, out.Evidence.Payment); diff != "" {
			t.Errorf("%s: evidence.payment (-want +got):\n%s", name, diff)
		}
		if report.Captured != capture || report.Held != tc.held {
			t.Errorf("%s: the payment response captured %s of %s, the evidence commits %s of %s", name, report.Captured, report.Held, capture, tc.held)
		}
		res, err := verifier.Verify(out.Receipt, receipt.Originals{}, time.Now())
		if err != nil || !res.Valid() {
			t.Fatalf("%s: the receipt does not verify: %v %+v", name, err, res)
		}
		r, err := receipt.Parse(out.Receipt)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, r.Decision.Payment); diff != "" {
			t.Errorf("%s: decision.payment (-want +got):\n%s", name, diff)
		}
	}

	// Unpaid: no payment member in the evidence or the receipt.
	out, err := svc.Call(context.Background(), &trust.Request{Mode: trust.ModeValidation, Policy: trust.PolicySafe, Receipt: receipt.Inline(),
		Task: trust.Task{Type: "summary", Input: router.NewStringInput("Refunds within 30 days."), ClaimedResult: trust.JSON("Refunds within 30 days.")}})
	if err != nil {
		t.Fatal(err)
	}
	data, _ := json.Marshal(out)
	if out.Evidence.Payment != nil || strings.Contains(string(data), `"payment"`) {
		t.Errorf("an unpaid call states a payment: %s", data)
	}
}
