package x402_test

import (
	"context"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// countingSettles counts the settles sent to an escrow.
type countingSettles struct {
	*evm.Escrow
	n *atomic.Int32
}

func (c countingSettles) Settle(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.SettleResponse, error) {
	c.n.Add(1)
	return c.Escrow.Settle(ctx, p, r)
}

// A retry of a paid request with the same proof replays its outcome: the
// handler does not run again and nothing is captured twice; concurrent
// retries of one payment make one lifecycle.
func TestMiddleware_escrowRetryReplays(t *testing.T) {
	noLeak(t)
	for _, fails := range []bool{false, true} {
		s := newEscrowServer(t, openBalance, nil, func(w http.ResponseWriter, r *http.Request) {
			if fails {
				http.Error(w, "no", 500)
				return
			}
			w.Write([]byte("Paris"))
		})
		var settles atomic.Int32
		s.facilitate(t, countingSettles{s.escrow, &settles})
		proof := s.proof(t)
		first, body := s.paid(t, proof)
		sr1, _ := escrowOf(t, first)
		const n = 8
		var wg sync.WaitGroup
		var mu sync.Mutex
		for range n {
			wg.Go(func() {
				resp, again := s.paid(t, proof)
				mu.Lock()
				defer mu.Unlock()
				if resp.StatusCode != first.StatusCode || again != body {
					t.Errorf("retry: status %d body %q, want %d %q", resp.StatusCode, again, first.StatusCode, body)
					return
				}
				if sr, _ := escrowOf(t, resp); sr.Transaction != sr1.Transaction {
					t.Errorf("retry settlement %s, want the first %s", sr.Transaction, sr1.Transaction)
				}
			})
		}
		wg.Wait()
		if s.runs.Load() != 1 {
			t.Errorf("fails %v: the handler ran %d times", fails, s.runs.Load())
		}
		if n := settles.Load(); n != 2 {
			t.Errorf("fails %v: %d settles sent, want 2 (the hold, then the capture or void)", fails, n)
		}
		want := int64(openBalance - 50_000)
		if fails {
			want = openBalance
		}
		if payer, _ := s.balances(); payer != want {
			t.Errorf("fails %v: payer holds %d, want %d", fails, payer, want)
		}
	}
}

// Concurrent first uses of one proof make one lifecycle: one hold, one
// capture, the handler run once.
func TestMiddleware_escrowConcurrentFirstUses(t *testing.T) {
	noLeak(t)
	s := newEscrowServer(t, openBalance, nil, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("Paris")) })
	proof := s.proof(t)
	const n = 8
	var wg sync.WaitGroup
	var paid atomic.Int32
	for range n {
		wg.Go(func() {
			resp, _ := s.paid(t, proof)
			switch resp.StatusCode {
			case http.StatusOK:
				paid.Add(1)
			case http.StatusPaymentRequired: // "already used" while the first held
			default:
				t.Errorf("status %d", resp.StatusCode)
			}
		})
	}
	wg.Wait()
	if s.runs.Load() != 1 || paid.Load() < 1 {
		t.Errorf("the handler ran %d times, %d answers delivered", s.runs.Load(), paid.Load())
	}
	if payer, _ := s.balances(); payer != openBalance-50_000 {
		t.Errorf("payer holds %d, want one capture of 50000", payer)
	}
}
