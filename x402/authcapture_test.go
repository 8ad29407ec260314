package x402_test

import (
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

const (
	acUSDC          = "0x036CbD53842c5426634e7929541eC2318f3dCF7e"
	acAuthorizerKey = "0x8b3a350cf5c34c9194ca85829a2df0ec3153be0318b5e2d3348e872092edffba"
)

// authCaptureOffer holds 0.05 USDC for an hour in the offline escrow,
// relayed with the receiver authorizer's consent.
func authCaptureOffer(t *testing.T, authorizer *evm.PrivateKey) x402.PaymentRequirements {
	t.Helper()
	now := uint64(time.Now().Unix())
	return x402.PaymentRequirements{
		Scheme: x402.SchemeAuthCapture, Network: "eip155:84532", Amount: "50000", Asset: acUSDC, PayTo: payTo, MaxTimeoutSeconds: 60,
		Extra: evm.AuthCaptureExtra{
			Name: "USDC", Version: "2", CaptureAuthorizer: evm.OfflineFacilitatorAddress, ReceiverAuthorizer: authorizer.Address().String(),
			FeeRecipient: evm.Address{}.String(), CaptureDeadline: now + 3600, RefundDeadline: now + 86400,
		}.Map(),
	}
}

// escrowRoute answers 402 with offer, and a paid request by placing the
// hold through the facilitator fc before it answers (the escrow flow's
// first settle), keeping the proofs it held.
type escrowRoute struct {
	t     *testing.T
	fc    *x402.FacilitatorClient
	offer x402.PaymentRequirements
	mu    sync.Mutex
	held  []*x402.PaymentPayload
}

func (e *escrowRoute) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	h := r.Header.Get(x402.HeaderPaymentSignature)
	if h == "" {
		v, err := x402.EncodeHeader(x402.PaymentRequired{X402Version: x402.Version2, Accepts: []x402.PaymentRequirements{e.offer}})
		if err != nil {
			e.t.Error(err)
		}
		w.Header().Set(x402.HeaderPaymentRequired, v)
		w.WriteHeader(http.StatusPaymentRequired)
		return
	}
	p, err := x402.DecodePaymentPayload(h)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadRequest)
		return
	}
	sr, err := e.fc.Settle(r.Context(), p, e.offer)
	if err != nil || !sr.Success {
		e.t.Errorf("authorize: %+v, %v", sr, err)
		http.Error(w, "hold refused", http.StatusPaymentRequired)
		return
	}
	e.mu.Lock()
	e.held = append(e.held, p)
	e.mu.Unlock()
	v, _ := x402.EncodeHeader(sr)
	w.Header().Set(x402.HeaderPaymentResponse, v)
	w.Write([]byte("held"))
}

// The Transport pays an "auth-capture" offer when its Policy lists the
// scheme; the hold is placed through a facilitator reached over HTTP,
// which then relays the server's capture (voiding the rest) and refund,
// and a repeated capture gets its first outcome.
func TestAuthCapture_transportPaysAndTheLifecycleIsRelayed(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	authorizer, _ := evm.ParsePrivateKey(acAuthorizerKey)
	escrow := &evm.Escrow{OpenBalance: big.NewInt(1_000_000)}
	fs := httptest.NewServer(x402.NewFacilitatorHandler(escrow))
	defer fs.Close()
	fc := &x402.FacilitatorClient{URL: fs.URL, HTTPClient: fs.Client()}
	route := &escrowRoute{t: t, fc: fc, offer: authCaptureOffer(t, authorizer)}
	srv := httptest.NewServer(route)
	defer srv.Close()

	payer := newPayer(t)
	c := &http.Client{Transport: &x402.Transport{Base: srv.Client().Transport, Payer: payer, Policy: x402.Policy{Schemes: []string{x402.SchemeExact, x402.SchemeAuthCapture}}}}
	resp, err := c.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	sr, err := x402.SettlementFromResponse(resp)
	if err != nil || resp.StatusCode != http.StatusOK || !sr.Success || sr.Amount != "50000" {
		t.Fatalf("status %d, settlement %+v, %v", resp.StatusCode, sr, err)
	}
	token, _ := evm.ParseAddress(acUSDC)
	terms, err := evm.ParseAuthCaptureOffer(route.offer)
	if err != nil {
		t.Fatal(err)
	}
	balances := func() [3]int64 {
		// Every address starts with OpenBalance, the escrow too.
		return [3]int64{escrow.Balance(token, payer.Address()).Int64(), escrow.Balance(token, terms.Deployment.Escrow).Int64(), escrow.Balance(token, terms.Receiver).Int64()}
	}
	if got, want := balances(), [3]int64{950_000, 1_050_000, 1_000_000}; got != want {
		t.Fatalf("after the hold: payer, escrow, receiver %v, want %v", got, want)
	}

	// The server, after the work: capture 0.03, void the rest.
	pl, err := evm.DecodeAuthCapturePayload(route.held[0].Payload)
	if err != nil {
		t.Fatal(err)
	}
	hold, err := terms.Verify(pl, time.Now())
	if err != nil {
		t.Fatal(err)
	}
	capture, err := terms.SignCapture(authorizer, hold.PaymentInfo, pl.SaltNonce, big.NewInt(30_000), big.NewInt(50_000), big.NewInt(0), true)
	if err != nil {
		t.Fatal(err)
	}
	cp, err := capture.Payment(route.offer)
	if err != nil {
		t.Fatal(err)
	}
	first, err := fc.Settle(t.Context(), cp, route.offer)
	if err != nil || !first.Success || first.Amount != "30000" {
		t.Fatalf("capture: %+v, %v", first, err)
	}
	if got, want := balances(), [3]int64{970_000, 1_000_000, 1_030_000}; got != want {
		t.Fatalf("after the capture: payer, escrow, receiver %v, want %v", got, want)
	}
	again, err := fc.Settle(t.Context(), cp, route.offer)
	if err != nil || !cmp.Equal(first, again) {
		t.Fatalf("the repeated capture: %+v, %v; want %+v", again, err, first)
	}

	refund, err := terms.SignRefund(authorizer, hold.PaymentInfo, pl.SaltNonce, big.NewInt(10_000), big.NewInt(0), big.NewInt(30_000))
	if err != nil {
		t.Fatal(err)
	}
	rp, _ := refund.Payment(route.offer)
	if sr, err := fc.Settle(t.Context(), rp, route.offer); err != nil || !sr.Success {
		t.Fatalf("refund: %+v, %v", sr, err)
	}
	if got := escrow.Balance(token, payer.Address()).Int64(); got != 980_000 {
		t.Fatalf("after the refund the payer holds %d, want 980000", got)
	}
	if n := payer.n.Load(); n != 1 {
		t.Errorf("the payer signed %d authorizations, want 1", n)
	}
}

// The zero Policy does not pay "auth-capture", and a listed scheme is
// still held to MaxAmount; the payer refuses a hold longer than its
// MaxHold.
func TestAuthCapture_transportRefusesOutsideItsPolicy(t *testing.T) {
	authorizer, _ := evm.ParsePrivateKey(acAuthorizerKey)
	route := &escrowRoute{t: t, fc: &x402.FacilitatorClient{URL: "http://127.0.0.1:0"}, offer: authCaptureOffer(t, authorizer)}
	srv := httptest.NewServer(route)
	t.Cleanup(srv.Close)
	payer := newPayer(t)
	for _, c := range []struct {
		name   string
		policy x402.Policy
		hold   time.Duration
		want   error
		says   string
	}{
		{"zero policy", x402.Policy{}, 0, x402.ErrNoAcceptableOffer, "scheme"},
		{"above MaxAmount", x402.Policy{Schemes: []string{x402.SchemeAuthCapture}, MaxAmount: 49_999}, 0, x402.ErrAmountAboveLimit, "49999"},
		{"hold too long", x402.Policy{Schemes: []string{x402.SchemeAuthCapture}}, 30 * time.Minute, nil, "capture deadline"},
	} {
		t.Run(c.name, func(t *testing.T) {
			payer.MaxHold = c.hold
			client := &http.Client{Transport: &x402.Transport{Payer: payer, Policy: c.policy}}
			_, err := client.Get(srv.URL)
			if err == nil || c.want != nil && !errors.Is(err, c.want) || !strings.Contains(err.Error(), c.says) {
				t.Fatalf("err = %v, want %v saying %q", err, c.want, c.says)
			}
		})
	}
	if len(route.held) != 0 {
		t.Fatalf("%d holds placed", len(route.held))
	}
}
