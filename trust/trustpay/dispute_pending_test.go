package trustpay_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// lostCapture is the offline escrow as a facilitator that does not
// answer the first capture it is sent, and does not apply it.
type lostCapture struct {
	*evm.Escrow
	lost atomic.Bool
}

func (f *lostCapture) Settle(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.SettleResponse, error) {
	if strings.Contains(string(p.Payload), `"type":"capture"`) && f.lost.CompareAndSwap(false, true) {
		return nil, errors.New("the facilitator did not answer")
	}
	return f.Escrow.Settle(ctx, p, r)
}

// TestDisputes_captureCompletedLater: a paid trust call whose capture
// the facilitator left unanswered is answered 402, and its retry with
// the same proof completes the capture and delivers the answer; the
// call's caller's report that it was wrong then refunds the capture,
// once, as for a call captured at once.
func TestDisputes_captureCompletedLater(t *testing.T) {
	d, esc, mw := newDisputesVia(t, func(e *router.Engine) router.Service { return e }, "POST "+trust.X402CallPath,
		func(e *evm.Escrow) x402.Facilitator { return &lostCapture{Escrow: e} })
	h, err := trust.NewHandler(d.Service, trust.WithX402(func(h http.Handler) http.Handler { return mw(d.Record(h)) }))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	payer, _ := evm.NewPayer(buyerKey)
	c := &http.Client{Transport: &x402.Transport{Payer: payer, Policy: x402.Policy{Schemes: []string{x402.SchemeAuthCapture}}}}
	body, _ := json.Marshal(&trust.Request{Mode: trust.ModeValidation, Policy: trust.PolicySafe,
		Task: trust.Task{Type: "summary", Input: router.NewStringInput("Refunds within 30 days."), ClaimedResult: trust.JSON("Refunds within 30 days.")}})
	call := func() (*http.Response, error) {
		req, _ := http.NewRequest(http.MethodPost, srv.URL+trust.X402CallPath, bytes.NewReader(body))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set(x402.HeaderIdempotencyKey, "order-1") // the retry carries the same proof
		return c.Do(req)
	}
	if _, err := call(); !errors.Is(err, x402.ErrPaymentPending) {
		t.Fatalf("first use: %v, want the payment pending (the capture went unanswered)", err)
	}
	resp, err := call()
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var answer paidAnswer
	if err := json.NewDecoder(resp.Body).Decode(&answer); err != nil || resp.StatusCode != http.StatusOK || answer.TraceID == "" {
		t.Fatalf("the retry: status %d, answer %+v, %v; want the answer", resp.StatusCode, answer, err)
	}
	token, _ := evm.ParseAddress(usdcSepolia)
	balance := func() int64 { return esc.Balance(token, payer.Address()).Int64() }
	if got := balance(); got != openBalance-10_000 {
		t.Fatalf("after the retry the buyer holds %d, want %d", got, openBalance-10_000)
	}
	ctx := trust.WithCaller(context.Background(), "payer:"+strings.ToLower(payer.Address().String()))
	for i := range 2 {
		o, refunded, err := d.Feedback(ctx, answer.TraceID, false)
		if err != nil || !refunded || o.Amount != "10000" || balance() != openBalance {
			t.Errorf("report %d: %+v, refunded %v, %v, buyer %d; want the capture refunded once", i+1, o, refunded, err, balance())
		}
	}
}
