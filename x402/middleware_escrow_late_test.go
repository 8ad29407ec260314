package x402_test

import (
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
