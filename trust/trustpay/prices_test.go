package trustpay_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"testing"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/trustpay"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// trustServer serves the trust call over x402: fast, safe and oracle at
// $0.005, adaptive at $0.001 a run.
func trustServer(t *testing.T) (*httptest.Server, *evm.Facilitator) {
	t.Helper()
	fixed, err := evm.USDC("eip155:84532", seller, "$0.005")
	if err != nil {
		t.Fatal(err)
	}
	run, err := evm.UptoUSDC("eip155:84532", seller, "$0.001", evm.OfflineFacilitatorAddress)
	if err != nil {
		t.Fatal(err)
	}
	prices := trustpay.Prices{
		Fixed:  x402.Price{Accepts: []x402.PaymentRequirements{fixed}},
		PerRun: x402.Price{Accepts: []x402.PaymentRequirements{run}},
	}
	pf, err := prices.PriceFunc(trust.X402CallPath)
	if err != nil {
		t.Fatal(err)
	}
	fac := &evm.Facilitator{}
	paywall, err := x402.Middleware(x402.MiddlewareConfig{Facilitator: fac, PriceFunc: pf})
	if err != nil {
		t.Fatal(err)
	}
	h, err := trust.NewHandler(service(t), trust.WithX402(func(next http.Handler) http.Handler {
		return paywall(trustpay.ChargeRuns(next, nil))
	}))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	return srv, fac
}

func callTrust(t *testing.T, url string, policy trust.Policy, p x402.Policy) (*trust.Response, *x402.SettleResponse) {
	t.Helper()
	payer, _ := evm.NewPayer(buyerKey)
	c := &http.Client{Transport: &x402.Transport{Payer: payer, Policy: p}}
	body, _ := json.Marshal(trust.Request{
		Mode: trust.ModeValidation, Policy: policy,
		Task: trust.Task{Type: "summary", Input: router.NewStringInput("Refunds within 30 days."), ClaimedResult: trust.JSON("Refunds within 30 days.")},
	})
	resp, err := c.Post(url+trust.X402CallPath, "application/json", bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	data, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("status %d: %s", resp.StatusCode, data)
	}
	var out trust.Response
	if err := json.Unmarshal(data, &out); err != nil {
		t.Fatal(err)
	}
	sr, err := x402.SettlementFromResponse(resp)
	if err != nil {
		t.Fatal(err)
	}
	return &out, sr
}

func TestChargeRuns_adaptivePaysTheRunsItLaunched(t *testing.T) {
	srv, fac := trustServer(t)
	out, sr := callTrust(t, srv.URL, trust.PolicyAdaptive, x402.Policy{Schemes: []string{x402.SchemeUpto}})
	runs := out.Evidence.Launched
	// How many runs settle the call is the adaptive rule's choice (two
	// agreeing runs of sessions with no record yet may not be enough);
	// what the buyer pays must follow it, and stay under the 5 authorized.
	if out.Status != trust.StatusValid || runs < 2 || runs >= trustpay.AdaptiveMaxRuns {
		t.Fatalf("status %s after %d runs, want VALID after 2 to %d", out.Status, runs, trustpay.AdaptiveMaxRuns-1)
	}
	want := strconv.Itoa(1000 * runs)
	if sr.Amount != want {
		t.Errorf("settled %s, want %s (%d runs at 1000)", sr.Amount, want, runs)
	}
	u, ok := x402.UsageFromSettlement(sr)
	if !ok || u != (x402.Usage{Amount: uint64(1000 * runs), Units: uint64(runs), Unit: trustpay.UnitRun, MaxAmount: 5000}) {
		t.Errorf("usage = %+v, %v", u, ok)
	}
	s := fac.Settlements()
	if len(s) != 1 || s[0].Amount != want || s[0].Permit2 == nil || s[0].Permit2.Permitted.Amount != "5000" {
		t.Errorf("settlements = %+v, want %s of an authorized 5000", s, want)
	}
}

func TestChargeRuns_fixedTiersKeepTheirPrice(t *testing.T) {
	srv, fac := trustServer(t)
	out, sr := callTrust(t, srv.URL, trust.PolicySafe, x402.Policy{})
	if out.Status != trust.StatusValid || sr.Amount != "5000" {
		t.Errorf("safe: %s, settled %s; want VALID at 5000", out.Status, sr.Amount)
	}
	if _, ok := x402.UsageFromSettlement(sr); ok {
		t.Error("a fixed price reports usage")
	}
	if s := fac.Settlements(); len(s) != 1 || s[0].Scheme != x402.SchemeExact {
		t.Errorf("settlements = %+v", s)
	}
}

func TestChargeRuns_adaptiveAboveThePolicyIsRefused(t *testing.T) {
	srv, fac := trustServer(t)
	payer, _ := evm.NewPayer(buyerKey)
	c := &http.Client{Transport: &x402.Transport{Payer: payer, Policy: x402.Policy{Schemes: []string{x402.SchemeUpto}, MaxAmount: 4000}}}
	body := `{"mode":"validation","policy":"adaptive","task":{"claimed_result":"x","input":"y"}}`
	_, err := c.Post(srv.URL+trust.X402CallPath, "application/json", bytes.NewReader([]byte(body)))
	if !x402.Permanent(err) || len(fac.Settlements()) != 0 {
		t.Errorf("err = %v, %d settlements; want a refusal to pay 5 runs above a limit of 4000", err, len(fac.Settlements()))
	}
}

func TestPrices_refusesAFixedPerRunOffer(t *testing.T) {
	fixed, _ := evm.USDC("eip155:84532", seller, "$0.005")
	if _, err := (trustpay.Prices{PerRun: x402.Price{Accepts: []x402.PaymentRequirements{fixed}}}).PriceFunc(trust.X402CallPath); err == nil {
		t.Error("an exact offer was taken as a price per run")
	}
}
