package trustmcp_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vouchkit/vouch/trust/trustmcp"
	"github.com/vouchkit/vouch/x402"
)

// The retry of a payment whose capture is pending is answered from what
// the Paywall kept up to the capture deadline, even in its last minute,
// when the deadline no longer leaves room for new work: the capture
// completes and the result it buys is returned. A new payment that late
// is still refused, and the tool does not run for it.
func TestPaywall_escrowRetryInTheCapturesLastMinute(t *testing.T) {
	var clock atomic.Int64 // what the paywall's clock is ahead of the real one
	now := func() time.Time { return time.Now().Add(time.Duration(clock.Load())) }
	r := newEscrowRigWith(t, func(cfg *trustmcp.PaywallConfig) { cfg.Now = now })
	open := r.bed.Balances()
	p := r.pay(t, "square")
	late := r.pay(t, "square") // signed now, sent for the first time late
	r.fac.dropCapture.Store(true)
	if res, err := paidCall(context.Background(), t, r.cs, "square", 3, p); err != nil || !res.IsError {
		t.Fatalf("first use: %v %q, want the terms with the failed capture", err, text(res))
	}

	// Thirty seconds before the capture deadline (ten minutes).
	clock.Store(int64(x402.DefaultCaptureWindow - 30*time.Second))
	if res, err := paidCall(context.Background(), t, r.cs, "square", 3, late); err != nil || !res.IsError {
		t.Errorf("a new payment whose capture deadline is 30 s away: %v %q, want the terms", err, text(res))
	}
	retriesBuy(t, r, p, open, "in the last minute")
}
