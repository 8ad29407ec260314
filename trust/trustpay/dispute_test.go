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
	"sync"
	"testing"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/internal/routerfault"
	"github.com/vouchkit/vouch/trust/trustpay"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/escrow"
	"github.com/vouchkit/vouch/x402/evm"
)

// disputeRoute is a paid trust route, escrowed, whose disputes d
// records; its handler keeps each answer under the request's
// Idempotency-Key and delivers it again from there, as a Replayer does.
type disputeRoute struct {
	*httptest.Server
	d      trustpay.Disputes
	escrow *evm.Escrow
}

func newDisputeRoute(t *testing.T) *disputeRoute {
	t.Helper()
	return newDisputeRouteOn(t, func(e *router.Engine) router.Service { return e })
}

// newDisputeRouteOn is newDisputeRoute, its trust service running on
// what on makes of its engine.
func newDisputeRouteOn(t *testing.T, on func(*router.Engine) router.Service) *disputeRoute {
	t.Helper()
	d, esc, mw := newDisputes(t, on, "POST /trust")
	svc := d.Service
	var (
		mu   sync.Mutex
		kept = map[string][]byte{}
	)
	route := d.Record(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := r.Header.Get(x402.HeaderIdempotencyKey)
		mu.Lock()
		answer, ok := kept[key]
		mu.Unlock()
		if ok && key != "" {
			w.Header().Set(x402.HeaderIdempotentReplayed, "true")
			w.Write(answer)
			return
		}
		resp, err := svc.Call(r.Context(), &trust.Request{Mode: trust.ModeValidation, Policy: trust.PolicySafe, Receipt: receipt.Inline(),
			Task: trust.Task{Type: "summary", Input: router.NewStringInput("Refunds within 30 days."), ClaimedResult: trust.JSON("Refunds within 30 days.")}})
		if err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		answer, _ = json.Marshal(resp)
		mu.Lock()
		kept[key] = answer
		mu.Unlock()
		w.Write(answer)
	}))
	// The caller is the buyer's credential, as an authenticating
	// middleware outside the paywall would set it.
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mw(route).ServeHTTP(w, r.WithContext(trust.WithCaller(r.Context(), "key:alice")))
	}))
	t.Cleanup(srv.Close)
	return &disputeRoute{Server: srv, d: d, escrow: esc}

}

// newDisputes returns the disputes of a trust service, escrowed, running
// on what on makes of its engine, and the x402 middleware that takes its
// "auth-capture" payments on the route pattern.
func newDisputes(t *testing.T, on func(*router.Engine) router.Service, pattern string) (trustpay.Disputes, *evm.Escrow, func(http.Handler) http.Handler) {
	t.Helper()
	return newDisputesVia(t, on, pattern, func(e *evm.Escrow) x402.Facilitator { return e })
}

// newDisputesVia is newDisputes whose route and disputes reach the
// offline escrow through the facilitator via makes of it.
func newDisputesVia(t *testing.T, on func(*router.Engine) router.Service, pattern string, via func(*evm.Escrow) x402.Facilitator) (trustpay.Disputes, *evm.Escrow, func(http.Handler) http.Handler) {
	t.Helper()
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
	svc, err := trust.New(on(engine), trust.WithReceipts(&receipt.Issuer{Store: &receipt.MemStore{}}), trust.WithSigningKey(ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, 32))))
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
	esc := &evm.Escrow{OpenBalance: big.NewInt(openBalance)}
	fac := via(esc)
	ledger := &x402.MemoryEscrowLedger{}
	d := trustpay.Disputes{Service: svc, Escrow: &escrow.Disputes{Ledger: ledger, Facilitator: fac, Authorizer: authorizer, Policy: escrow.RefundWhole}}
	mw, err := x402.Middleware(x402.MiddlewareConfig{
		Facilitator: fac,
		Escrow:      &x402.EscrowConfig{Authorizer: authorizer, Ledger: ledger},
		Routes:      map[string]x402.Price{pattern: {Accepts: []x402.PaymentRequirements{offer}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	return d, esc, mw
}

// paidAnswer is what a dispute names of a paid call's answer.
type paidAnswer struct {
	TraceID string `json:"trace_id"`
	Status  string `json:"status"`
	Receipt struct {
		ReceiptID string `json:"receipt_id"`
	} `json:"receipt"`
}

// call pays for one call with a new payment, sending the Idempotency-Key
// key when it is not empty.
func (s *disputeRoute) call(t *testing.T, c *http.Client, key string) (paidAnswer, x402.EscrowReport) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, s.URL+"/trust", strings.NewReader("{}"))
	if key != "" {
		req.Header.Set(x402.HeaderIdempotencyKey, key)
	}
	resp, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var answer paidAnswer
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil || resp.StatusCode != http.StatusOK || answer.Receipt.ReceiptID == "" {
		t.Fatalf("status %d, answer %+v, %v", resp.StatusCode, answer, err)
	}
	sr, err := x402.SettlementFromResponse(resp)
	if err != nil {
		t.Fatal(err)
	}
	report, _ := x402.EscrowFromSettlement(sr)
	return answer, report
}

// A paid trust route, escrowed: the call is captured; a report from
// another caller that its outcome was wrong is refused and refunds
// nothing; the call's caller's report, by receipt id, refunds the payer
// by the seller's policy, once, and a second report by trace id
// replays the refund.
func TestDisputes_callersWrongReportRefunds(t *testing.T) {
	s := newDisputeRoute(t)
	d, escrow := s.d, s.escrow
	payer, _ := evm.NewPayer(buyerKey)
	c := &http.Client{Transport: &x402.Transport{Payer: payer, Policy: x402.Policy{Schemes: []string{x402.SchemeAuthCapture}}}}
	answer, _ := s.call(t, c, "")
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

// The caller's report that its call was wrong is accepted, but the exam
// of the call's claim fails: the report stands, so the payer is refunded
// all the same, once, and the error says the exam failed.
func TestDisputes_examFailsRefundsAllTheSame(t *testing.T) {
	s := newDisputeRouteOn(t, func(e *router.Engine) router.Service { return routerfault.OracleDown{Engine: e} })
	payer, _ := evm.NewPayer(buyerKey)
	c := &http.Client{Transport: &x402.Transport{Payer: payer, Policy: x402.Policy{Schemes: []string{x402.SchemeAuthCapture}}}}
	answer, _ := s.call(t, c, "")
	token, _ := evm.ParseAddress(usdcSepolia)
	balance := func() int64 { return s.escrow.Balance(token, payer.Address()).Int64() }
	alice := trust.WithCaller(context.Background(), "key:alice")
	for i := range 2 {
		o, refunded, err := s.d.Feedback(alice, answer.TraceID, false)
		if !errors.Is(err, trust.ErrExam) || !refunded || o.Amount != "10000" || balance() != openBalance {
			t.Errorf("report %d: %+v, refunded %v, %v, buyer %d; want ErrExam and the capture refunded once", i+1, o, refunded, err, balance())
		}
	}
}

// A buyer retries a call with a new payment and gets the stored answer:
// the new hold is voided, and the call's dispute still reaches the
// payment that was captured, which is refunded whole; the voided retry
// cost nothing and is not what the dispute names.
func TestDisputes_retryWithANewPaymentKeepsTheDispute(t *testing.T) {
	s := newDisputeRoute(t)
	payer, _ := evm.NewPayer(buyerKey)
	client := func() *http.Client { // a Transport of its own pays anew
		return &http.Client{Transport: &x402.Transport{Payer: payer, Policy: x402.Policy{Schemes: []string{x402.SchemeAuthCapture}}}}
	}
	first, bought := s.call(t, client(), "order-7")
	again, retried := s.call(t, client(), "order-7")
	if bought.State != x402.EscrowCaptured || retried.State != x402.EscrowVoided || retried.ID == bought.ID || again != first {
		t.Fatalf("first %+v, retry %+v; answers %+v and %+v: want the retry's new hold voided with the same answer", bought, retried, first, again)
	}
	token, _ := evm.ParseAddress(usdcSepolia)
	balance := func() int64 { return s.escrow.Balance(token, payer.Address()).Int64() }
	if got := balance(); got != openBalance-10_000 {
		t.Fatalf("after the retry the buyer holds %d, want %d", got, openBalance-10_000)
	}
	alice := trust.WithCaller(context.Background(), "key:alice")
	o, refunded, err := s.d.Feedback(alice, first.Receipt.ReceiptID, false)
	if err != nil || !refunded || !o.Settlement.Success || o.Amount != "10000" || balance() != openBalance {
		t.Fatalf("the dispute: %+v, refunded %v, %v, buyer %d; want the captured payment refunded", o, refunded, err, balance())
	}
}
