package x402_test

import (
	"context"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// The retry of a payment whose capture is pending is answered from its
// kept outcome up to the capture deadline, even in its last minute, when
// the deadline no longer leaves room for new work: the capture completes
// and the answer it buys is delivered. A new payment that late is still
// refused.
func TestMiddleware_escrowRetryInTheCapturesLastMinute(t *testing.T) {
	noLeak(t)
	var ahead atomic.Int64 // what the server's clock is ahead of the real one
	now := func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }
	s := newEscrowServerWith(t, openBalance, nil, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("Paris")) },
		func(cfg *x402.MiddlewareConfig) { cfg.Now = now }, evm.TransferEIP3009)
	s.facilitate(t, &unansweredCapture{Escrow: s.escrow})
	proof := s.proof(t)
	late := s.proof(t) // signed now, sent for the first time late
	if first, _ := s.paid(t, proof); first.StatusCode != http.StatusPaymentRequired {
		t.Fatalf("first use: status %d, want 402 (the capture went unanswered)", first.StatusCode)
	}

	// Thirty seconds before the capture deadline (ten minutes).
	ahead.Store(int64(x402.DefaultCaptureWindow - 30*time.Second))
	resp, body := s.paid(t, proof)
	got := []any{resp.StatusCode, body}
	if resp.StatusCode == http.StatusOK {
		_, e := escrowOf(t, resp)
		got = append(got, e.State)
	}
	if diff := cmp.Diff([]any{http.StatusOK, "Paris", x402.EscrowCaptured}, got); diff != "" {
		t.Errorf("the retry (-want +got):\n%s", diff)
	}
	if payer, _ := s.balances(); payer != openBalance-50_000 {
		t.Errorf("payer holds %d, want one capture of 50000", payer)
	}
	if resp, _ := s.paid(t, late); resp.StatusCode != http.StatusPaymentRequired {
		t.Errorf("a new payment whose capture deadline is 30 s away: status %d, want 402", resp.StatusCode)
	}
	if n := s.runs.Load(); n != 1 {
		t.Errorf("the handler ran %d times, want once", n)
	}
}

// slowEscrowVerify is the offline escrow whose Verify moves the server's
// clock on by took, as a slow facilitator would take that long.
type slowEscrowVerify struct {
	*evm.Escrow
	ahead *atomic.Int64
	took  time.Duration
}

func (f slowEscrowVerify) Verify(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.VerifyResponse, error) {
	f.ahead.Add(int64(f.took))
	return f.Escrow.Verify(ctx, p, r)
}

// An "auth-capture" payment that arrives 10 s after it was signed, valid
// for 60 s, leaves room for the work (30 s) and a settlement (15 s). A
// verification of 10 s takes that room: the payment is then refused
// before the hold, and the handler never runs, where one of no time is
// held, served and captured.
func TestMiddleware_escrowVerifyTakesTheRoom(t *testing.T) {
	for _, tc := range []struct {
		took   time.Duration
		status int
		runs   int32
		payer  int64
	}{
		{0, http.StatusOK, 1, openBalance - 50_000},
		{10 * time.Second, http.StatusPaymentRequired, 0, openBalance},
	} {
		var ahead atomic.Int64
		now := func() time.Time { return time.Now().Add(time.Duration(ahead.Load())) }
		s := newEscrowServerWith(t, openBalance, nil, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("Paris")) },
			func(cfg *x402.MiddlewareConfig) { cfg.Now = now }, evm.TransferEIP3009)
		s.facilitate(t, slowEscrowVerify{Escrow: s.escrow, ahead: &ahead, took: tc.took})
		proof := s.proof(t)
		ahead.Store(int64(10 * time.Second))
		resp, body := s.paid(t, proof)
		payer, _ := s.balances()
		got := []any{resp.StatusCode, s.runs.Load(), payer}
		if diff := cmp.Diff([]any{tc.status, tc.runs, tc.payer}, got); diff != "" {
			t.Errorf("verification of %s: status, handler runs, payer's balance (-want +got):\n%s\n%s", tc.took, diff, body)
		}
	}
}
