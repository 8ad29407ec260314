package trustpay_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"errors"
	"math/big"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/trustpay"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// A paid trust route, escrowed: the call is captured; a report from
// another caller that its outcome was wrong is refused and refunds
// nothing; the call's caller's report, by receipt id, refunds the payer
// by the seller's policy, once, and a second report by trace id
// replays the refund.
func TestDisputes_callersWrongReportRefunds(t *testing.T) {
	book, err := reputation.New(new(reputation.Memory), reputation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	var ss []router.Session
	for id := range 5 {
		ss = append(ss, router.Session{ID: router.SessionID(id + 1), Worker: router.WorkerFunc(keepsFigures)})
	}
	engine, err := router.NewEngine(ss, router.WithReputation(book))
	if err != nil {
		t.Fatal(err)
	}
	svc, err := trust.New(engine, trust.WithReceipts(&receipt.Issuer{Store: &receipt.MemStore{}}), trust.WithSigningKey(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, 32))))
	if err != nil {
		t.Fatal(err)
	}
	key, _ := evm.ParsePrivateKey(authorizerKey)
	authorizer := evm.ReceiverAuthorizer{Key: key}
	operator, _ := evm.ParseAddress(evm.OfflineFacilitatorAddress)
	offer, err := evm.AuthCaptureUSDC("eip155:84532", seller, "$0.01", operator, key.Address())
	if err != nil {
		t.Fatal(err)
	}
	escrow := &evm.Escrow{OpenBalance: big.NewInt(openBalance)}
	ledger := &x402.MemoryEscrowLedger{}
	d := trustpay.Disputes{Service: svc, Escrow: &x402.EscrowDisputes{Ledger: ledger, Facilitator: escrow, Authorizer: authorizer, Policy: x402.RefundWhole}}
	mw, err := x402.Middleware(x402.MiddlewareConfig{
		Facilitator: escrow,
		Escrow:      &x402.EscrowConfig{Authorizer: authorizer, Ledger: ledger},
		Routes:      map[string]x402.Price{"POST /trust": {Accepts: []x402.PaymentRequirements{offer}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	route := d.Record(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		resp, err := svc.Call(r.Context(), &trust.Request{Mode: trust.ModeValidation, Policy: trust.PolicySafe, Receipt: receipt.Inline(),
			Task: trust.Task{Type: "summary", Input: router.NewStringInput("Refunds within 30 days."), ClaimedResult: trust.JSON("Refunds within 30 days.")}})
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		json.NewEncoder(w).Encode(resp)
	}))
	// The caller is the buyer's credential, as an authenticating
	// middleware outside the paywall would set it.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mw(route).ServeHTTP(w, r.WithContext(trust.WithCaller(r.Context(), "key:alice")))
	}))
	defer srv.Close()

	payer, _ := evm.NewPayer(buyerKey)
	c := &http.Client{Transport: &x402.Transport{Payer: payer, Policy: x402.Policy{Schemes: []string{x402.SchemeAuthCapture}}}}
	resp, err := c.Post(srv.URL+"/trust", "application/json", strings.NewReader("{}"))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var answer struct {
		TraceID string `json:"trace_id"`
		Status  string `json:"status"`
		Receipt struct {
			ReceiptID string `json:"receipt_id"`
		} `json:"receipt"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil || resp.StatusCode != http.StatusOK || answer.Receipt.ReceiptID == "" {
		t.Fatalf("status %d, answer %+v, %v", resp.StatusCode, answer, err)
	}
	token, _ := evm.ParseAddress(usdcSepolia)
	balance := func() int64 { return escrow.Balance(token, payer.Address()).Int64() }
	if got := balance(); got != openBalance-10_000 {
		t.Fatalf("after the call the buyer holds %d, want %d", got, openBalance-10_000)
	}

	bob := trust.WithCaller(context.Background(), "key:bob")
	if _, refunded, err := d.Feedback(bob, answer.TraceID, false); !errors.Is(err, trust.ErrUnknownCall) || refunded || balance() != openBalance-10_000 {
		t.Errorf("another caller's report: refunded %v, %v, buyer %d; want ErrUnknownCall and nothing refunded", refunded, err, balance())
	}
	alice := trust.WithCaller(context.Background(), "key:alice")
	o, refunded, err := d.Feedback(alice, answer.Receipt.ReceiptID, false)
	if err != nil || !refunded || !o.Settlement.Success || o.Amount != "10000" || balance() != openBalance {
		t.Fatalf("the caller's report: %+v, refunded %v, %v, buyer %d; want the capture refunded", o, refunded, err, balance())
	}
	again, refunded, err := d.Feedback(alice, answer.TraceID, false)
	if err != nil || !refunded || again.Settlement.Transaction != o.Settlement.Transaction || balance() != openBalance {
		t.Errorf("the report again by trace id: %+v, %v, %v, buyer %d; want the refund replayed", again, refunded, err, balance())
	}
}
