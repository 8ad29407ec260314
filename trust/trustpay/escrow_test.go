package trustpay_test

import (
	"io"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/trustpay"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

const (
	authorizerKey = "0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba"
	usdcSepolia   = "0x036CbD53842c5426634e7929541eC2318f3dCF7e"
	openBalance   = 1_000_000
)

// escrowSeller is the seller's summarizing route gated by a safe
// validation, paid with "auth-capture" in the offline escrow.
type escrowSeller struct {
	*httptest.Server
	escrow *evm.Escrow
	payer  *evm.Payer
}

func newEscrowSeller(t *testing.T) *escrowSeller {
	t.Helper()
	authorizer, _ := evm.ParsePrivateKey(authorizerKey)
	operator, _ := evm.ParseAddress(evm.OfflineFacilitatorAddress)
	o, err := evm.AuthCaptureUSDC("eip155:84532", seller, "$0.01", operator, authorizer.Address())
	if err != nil {
		t.Fatal(err)
	}
	s := &escrowSeller{escrow: &evm.Escrow{OpenBalance: big.NewInt(openBalance)}}
	s.payer, _ = evm.NewPayer(buyerKey)
	mw, err := x402.Middleware(x402.MiddlewareConfig{
		Facilitator: s.escrow,
		Escrow:      &x402.EscrowConfig{Authorizer: evm.ReceiverAuthorizer{Key: authorizer}},
		Routes: map[string]x402.Price{"POST /summarize": {
			Accepts: []x402.PaymentRequirements{o},
			Gate:    trustpay.Gate(trustpay.Route{Caller: service(t), Policy: trust.PolicySafe, Type: "summary", Spec: trust.JSON("keep every figure")}),
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Server = httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		answer := string(body)
		if strings.HasPrefix(answer, "bad") {
			answer, _, _ = strings.Cut(answer, ",")
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(trust.JSON(answer))
	})))
	t.Cleanup(s.Close)
	return s
}

func (s *escrowSeller) balance() int64 {
	token, _ := evm.ParseAddress(usdcSepolia)
	return s.escrow.Balance(token, s.payer.Address()).Int64()
}

// Escrow behind the verdict: a VALID answer is captured, an INVALID one
// voided, the buyer's balance back where it started; the verdict is in
// the payment response's escrow report, beside Vouch-Status.
func TestGate_escrowCapturesValidVoidsInvalid(t *testing.T) {
	for _, tc := range []struct {
		text    string
		status  int
		state   x402.EscrowState
		verdict string
		paid    int64
	}{
		{"Refunds within 30 days, at most 2 a year.", http.StatusOK, x402.EscrowCaptured, "VALID", 10_000},
		{"bad refunds within 30 days, at most 2 a year.", http.StatusBadGateway, x402.EscrowVoided, "INVALID", 0},
	} {
		s := newEscrowSeller(t)
		c := &http.Client{Transport: &x402.Transport{Payer: s.payer, Policy: x402.Policy{Schemes: []string{x402.SchemeAuthCapture}}}}
		resp, err := c.Post(s.URL+"/summarize", "text/plain", strings.NewReader(tc.text))
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		sr, err := x402.DecodeSettleResponse(resp.Header.Get(x402.HeaderPaymentResponse))
		if err != nil {
			t.Fatalf("%s: PAYMENT-RESPONSE: %v", tc.verdict, err)
		}
		e, ok := x402.EscrowFromSettlement(sr)
		if resp.StatusCode != tc.status || !ok || e.State != tc.state || e.Verdict != tc.verdict || resp.Header.Get(trustpay.HeaderStatus) != tc.verdict {
			t.Errorf("%s: status %d, report %+v, Vouch-Status %q", tc.verdict, resp.StatusCode, e, resp.Header.Get(trustpay.HeaderStatus))
		}
		if got := s.balance(); got != openBalance-tc.paid {
			t.Errorf("%s: the buyer holds %d, want %d", tc.verdict, got, openBalance-tc.paid)
		}
	}
}

// An adaptive call paid with "auth-capture" captures the runs it
// launched and voids the rest of the hold, as "upto" settles them.
func TestChargeRuns_escrowCapturesTheRunsLaunched(t *testing.T) {
	authorizer, _ := evm.ParsePrivateKey(authorizerKey)
	operator, _ := evm.ParseAddress(evm.OfflineFacilitatorAddress)
	fixed, _ := evm.USDC("eip155:84532", seller, "$0.005")
	run, err := evm.AuthCaptureUSDC("eip155:84532", seller, "$0.001", operator, authorizer.Address())
	if err != nil {
		t.Fatal(err)
	}
	pf, err := trustpay.Prices{Fixed: x402.Price{Accepts: []x402.PaymentRequirements{fixed}}, PerRun: x402.Price{Accepts: []x402.PaymentRequirements{run}}}.PriceFunc(trust.X402CallPath)
	if err != nil {
		t.Fatal(err)
	}
	escrow := &evm.Escrow{OpenBalance: big.NewInt(openBalance)}
	paywall, err := x402.Middleware(x402.MiddlewareConfig{Facilitator: escrow, PriceFunc: pf,
		Escrow: &x402.EscrowConfig{Authorizer: evm.ReceiverAuthorizer{Key: authorizer}}})
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
	out, sr := callTrust(t, srv.URL, trust.PolicyAdaptive, x402.Policy{Schemes: []string{x402.SchemeAuthCapture}})
	runs := out.Evidence.Launched
	if out.Status != trust.StatusValid || runs < 2 || runs >= trustpay.AdaptiveMaxRuns {
		t.Fatalf("status %s after %d runs", out.Status, runs)
	}
	want := strconv.Itoa(1000 * runs)
	e, ok := x402.EscrowFromSettlement(sr)
	if !ok || e.State != x402.EscrowCaptured || e.Verdict != "VALID" || e.Captured != want || e.Held != "5000" || sr.Amount != want {
		t.Errorf("settlement %+v, report %+v; want %s captured of a hold of 5000", sr, e, want)
	}
	u, ok := x402.UsageFromSettlement(sr)
	if !ok || u != (x402.Usage{Amount: uint64(1000 * runs), Units: uint64(runs), Unit: trustpay.UnitRun, MaxAmount: 5000}) {
		t.Errorf("usage = %+v, %v", u, ok)
	}
	payer, _ := evm.NewPayer(buyerKey)
	token, _ := evm.ParseAddress(usdcSepolia)
	if got := escrow.Balance(token, payer.Address()).Int64(); got != openBalance-int64(1000*runs) {
		t.Errorf("the buyer holds %d, want %d: the unlaunched runs voided", got, openBalance-1000*runs)
	}
}

// A fixed-price trust call paid with "auth-capture" follows its verdict:
// a definitive verdict, VALID or INVALID, is what the buyer bought and
// captures the price (a validator paid only for VALID would have a
// reason to say it); a verdict that decides nothing voids the hold and
// still delivers the verdict.
func TestChargeRuns_escrowFollowsTheVerdict(t *testing.T) {
	authorizer, _ := evm.ParsePrivateKey(authorizerKey)
	operator, _ := evm.ParseAddress(evm.OfflineFacilitatorAddress)
	fixed, err := evm.AuthCaptureUSDC("eip155:84532", seller, "$0.005", operator, authorizer.Address())
	if err != nil {
		t.Fatal(err)
	}
	pf, err := trustpay.Prices{Fixed: x402.Price{Accepts: []x402.PaymentRequirements{fixed}}}.PriceFunc(trust.X402CallPath)
	if err != nil {
		t.Fatal(err)
	}
	escrow := &evm.Escrow{OpenBalance: big.NewInt(openBalance)}
	paywall, err := x402.Middleware(x402.MiddlewareConfig{Facilitator: escrow, PriceFunc: pf,
		Escrow: &x402.EscrowConfig{Authorizer: evm.ReceiverAuthorizer{Key: authorizer}}})
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
	payer, _ := evm.NewPayer(buyerKey)
	token, _ := evm.ParseAddress(usdcSepolia)
	c := &http.Client{Transport: &x402.Transport{Payer: payer, Policy: x402.Policy{Schemes: []string{x402.SchemeAuthCapture}}}}
	spent := int64(0)
	for _, tc := range []struct {
		claim  string
		status trust.Status
		state  x402.EscrowState
		paid   int64
	}{
		{"Refunds within 30 days.", trust.StatusValid, x402.EscrowCaptured, 5000},
		{"Refunds within some days.", trust.StatusInvalid, x402.EscrowCaptured, 5000},
		{"unsure", trust.StatusRetry, x402.EscrowVoided, 0},
	} {
		body := `{"mode":"validation","policy":"safe","task":{"type":"summary","input":"Refunds within 30 days.","claimed_result":` + strconv.Quote(tc.claim) + `}}`
		resp, err := c.Post(srv.URL+trust.X402CallPath, "application/json", strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		data, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		sr, err := x402.DecodeSettleResponse(resp.Header.Get(x402.HeaderPaymentResponse))
		if err != nil {
			t.Fatalf("%s: %d %s: %v", tc.status, resp.StatusCode, data, err)
		}
		e, _ := x402.EscrowFromSettlement(sr)
		if resp.StatusCode != http.StatusOK || !strings.Contains(string(data), `"status":"`+string(tc.status)+`"`) || e.State != tc.state || e.Verdict != string(tc.status) {
			t.Errorf("%s: %d %s, report %+v", tc.status, resp.StatusCode, data, e)
		}
		spent += tc.paid
		if got := escrow.Balance(token, payer.Address()).Int64(); got != openBalance-spent {
			t.Errorf("%s: the buyer holds %d, want %d", tc.status, got, openBalance-spent)
		}
	}
}
