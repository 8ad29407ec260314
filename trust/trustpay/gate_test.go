package trustpay_test

import (
	"bytes"
	"context"
	"crypto/ed25519"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/trustpay"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const (
	buyerKey = "0x4c0883a69102937d6231471b5dbb6204fe5129617082792ae468d01a3f362318"
	seller   = "0x209693Bc6afc0C5328bA36FaF03C514EF312287C"
)

// keepsFigures judges a claimed summary VALID when it keeps every figure
// of the task's input; a claim of "slow" waits for the call's end.
func keepsFigures(ctx context.Context, job *router.Job) (*router.Result, error) {
	input, _ := job.TaskInput.String()
	var summary string
	json.Unmarshal(job.Claim.Output, &summary)
	switch summary {
	case "slow":
		<-ctx.Done()
		return nil, ctx.Err()
	case "unsure":
		return &router.Result{Verdict: router.VerdictRetry, Confidence: 0.5, Reasons: []string{"cannot tell"}}, nil
	}
	for _, word := range strings.Fields(input) {
		word = strings.Trim(word, ".,;:")
		if strings.ContainsAny(word, "0123456789") && !strings.Contains(summary, word) {
			return &router.Result{Verdict: router.VerdictInvalid, Confidence: 0.9, Reasons: []string{"drops " + word}}, nil
		}
	}
	return &router.Result{Verdict: router.VerdictValid, Confidence: 0.9, Reasons: []string{"keeps every figure"}}, nil
}

func service(t *testing.T) *trust.Service {
	t.Helper()
	return serviceOn(t, &receipt.MemStore{})
}

// serviceOn is service keeping its receipts in store.
func serviceOn(t *testing.T, store receipt.Store) *trust.Service {
	t.Helper()
	var ss []router.Session
	for id := range 5 {
		ss = append(ss, router.Session{ID: router.SessionID(id + 1), Worker: router.WorkerFunc(keepsFigures)})
	}
	engine, err := router.NewEngine(ss)
	if err != nil {
		t.Fatal(err)
	}
	key := ed25519.NewKeyFromSeed(bytes.Repeat([]byte{7}, 32))
	svc, err := trust.New(engine, trust.WithReceipts(&receipt.Issuer{Store: store}), trust.WithSigningKey(key))
	if err != nil {
		t.Fatal(err)
	}
	return svc
}

// sellerServer is a seller's own summarizing route, gated by a safe
// validation: its answers are the request's first sentence ("bad"
// requests), the whole request, or "slow".
type sellerServer struct {
	*httptest.Server
	fac      *evm.Facilitator
	receipts *receipt.MemStore // the trust service's
	runs     atomic.Int32
}

func newSeller(t *testing.T, budget time.Duration) *sellerServer {
	t.Helper()
	return newSellerReceipt(t, budget, receipt.Request{})
}

// newSellerReceipt is newSeller whose route asks for the receipt rcpt
// (trustpay.Route.Receipt).
func newSellerReceipt(t *testing.T, budget time.Duration, rcpt receipt.Request) *sellerServer {
	t.Helper()
	s := &sellerServer{fac: &evm.Facilitator{}, receipts: &receipt.MemStore{}}
	o, err := evm.USDC("eip155:84532", seller, "$0.01")
	if err != nil {
		t.Fatal(err)
	}
	mw, err := x402.Middleware(x402.MiddlewareConfig{
		Facilitator: s.fac,
		Routes: map[string]x402.Price{"POST /summarize": {
			Accepts:    []x402.PaymentRequirements{o},
			TimeBudget: budget,
			Gate: trustpay.Gate(trustpay.Route{Caller: serviceOn(t, s.receipts), Policy: trust.PolicySafe, Type: "summary", Spec: trust.JSON("keep every figure"),
				Receipt: rcpt}),
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Server = httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.runs.Add(1)
		body, _ := io.ReadAll(r.Body)
		answer := string(body)
		switch {
		case strings.HasPrefix(answer, "slow"):
			answer = "slow"
		case strings.HasPrefix(answer, "bad"):
			answer, _, _ = strings.Cut(answer, ",")
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(answer)
	})))
	t.Cleanup(s.Close)
	return s
}

type answer struct {
	status  int
	header  http.Header
	body    []byte
	settled *x402.SettleResponse
	problem struct {
		Code  string `json:"code"`
		Extra struct {
			Status     trust.Status   `json:"status"`
			Confidence float64        `json:"confidence"`
			Evidence   trust.Evidence `json:"evidence"`
			ReceiptID  string         `json:"receipt_id"`
		} `json:"extra"`
	}
}

// buy sends the same call twice with one payment (one Idempotency-Key).
func (s *sellerServer) buy(t *testing.T, text string, wantReceipt bool) [2]answer {
	t.Helper()
	payer, err := evm.NewPayer(buyerKey)
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{Transport: &x402.Transport{Payer: payer}}
	var out [2]answer
	for i := range out {
		req, _ := http.NewRequest(http.MethodPost, s.URL+"/summarize", strings.NewReader(text))
		req.Header.Set(x402.HeaderIdempotencyKey, "order-1")
		if wantReceipt {
			req.Header.Set(trustpay.HeaderReceipt, "detached")
		}
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		a := &out[i]
		a.status, a.header = resp.StatusCode, resp.Header
		a.body, _ = io.ReadAll(resp.Body)
		resp.Body.Close()
		a.settled, _ = x402.SettlementFromResponse(resp)
		json.Unmarshal(a.body, &a.problem)
	}
	return out
}

func TestGate_validDeliveryIsSettledOnce(t *testing.T) {
	s := newSeller(t, 0)
	got := s.buy(t, "Refunds within 30 days, at most 2 a year.", true)
	for i, a := range got {
		if a.status != http.StatusOK || a.settled == nil || !a.settled.Success || a.header.Get(trustpay.HeaderStatus) != "VALID" {
			t.Errorf("call %d: %d %s, settlement %+v, Vouch-Status %q", i, a.status, a.body, a.settled, a.header.Get(trustpay.HeaderStatus))
		}
		if !strings.HasPrefix(a.header.Get(trustpay.HeaderReceipt), "rcpt_") {
			t.Errorf("call %d: Vouch-Receipt %q", i, a.header.Get(trustpay.HeaderReceipt))
		}
	}
	if got[0].settled.Transaction != got[1].settled.Transaction {
		t.Error("the retry reports another settlement")
	}
	if n := len(s.fac.Settlements()); n != 1 {
		t.Errorf("%d settlements, want 1", n)
	}
	if n := s.runs.Load(); n != 1 {
		t.Errorf("the seller ran %d times, want 1", n)
	}
}

func TestGate_invalidDeliveryIsNeverSettled(t *testing.T) {
	s := newSeller(t, 0)
	got := s.buy(t, "bad refunds within 30 days, at most 2 a year.", true)
	for i, a := range got {
		if a.status != http.StatusBadGateway || a.problem.Code != "not_delivered" || a.header.Get(trustpay.HeaderStatus) != "INVALID" {
			t.Errorf("call %d: %d %s, Vouch-Status %q", i, a.status, a.body, a.header.Get(trustpay.HeaderStatus))
		}
		if a.header.Get(x402.HeaderPaymentResponse) != "" || a.settled != nil {
			t.Errorf("call %d: a refusal carries a settlement", i)
		}
		x := a.problem.Extra
		if x.Status != trust.StatusInvalid || x.Confidence <= 0 || x.Evidence.Launched != 3 || len(x.Evidence.Verdicts) != 3 {
			t.Errorf("call %d: problem extra = %+v", i, x)
		}
		if x.ReceiptID == "" || x.ReceiptID != a.header.Get(trustpay.HeaderReceipt) {
			t.Errorf("call %d: receipt id %q in the body, %q in the header", i, x.ReceiptID, a.header.Get(trustpay.HeaderReceipt))
		}
	}
	if !bytes.Equal(got[0].body, got[1].body) {
		t.Errorf("the retry got another answer:\n%s\n%s", got[0].body, got[1].body)
	}
	if s := s.fac.Settlements(); len(s) != 0 {
		t.Errorf("settlements = %+v, want none", s)
	}
	if n := s.runs.Load(); n != 1 {
		t.Errorf("the seller ran %d times, want 1 (the retry answered from the kept outcome)", n)
	}
}

func TestGate_validationOutOfTimeIsNotSettled(t *testing.T) {
	s := newSeller(t, 300*time.Millisecond)
	got := s.buy(t, "slow", false)
	for i, a := range got {
		if a.status != http.StatusGatewayTimeout || a.problem.Code != "timeout" || a.header.Get(trustpay.HeaderStatus) != trustpay.StatusTimeout {
			t.Errorf("call %d: %d %s, Vouch-Status %q", i, a.status, a.body, a.header.Get(trustpay.HeaderStatus))
		}
		if a.settled != nil {
			t.Errorf("call %d: settled %+v", i, a.settled)
		}
	}
	if s := s.fac.Settlements(); len(s) != 0 {
		t.Errorf("settlements = %+v, want none", s)
	}
}
