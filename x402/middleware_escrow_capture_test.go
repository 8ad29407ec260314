package x402_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/escrow"
	"github.com/vouchkit/vouch/x402/evm"
)

// unansweredCapture is an escrow whose first capture goes unanswered: it
// is applied or not (applied), and the caller gets an error either way,
// as from a facilitator that timed out.
type unansweredCapture struct {
	*evm.Escrow
	applied bool
	failed  atomic.Bool
}

func (u *unansweredCapture) Settle(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.SettleResponse, error) {
	if strings.Contains(string(p.Payload), `"type":"capture"`) && u.failed.CompareAndSwap(false, true) {
		if u.applied {
			u.Escrow.Settle(ctx, p, r)
		}
		return nil, errors.New("facilitator timed out")
	}
	return u.Escrow.Settle(ctx, p, r)
}

// A capture whose outcome the facilitator did not give is answered 402
// without the answer; whether the capture then happens (it went through,
// or the recovery sends it again), the retry with the same proof gets
// the answer the payment bought, with the capture: the payer never pays
// for an answer it cannot have.
func TestMiddleware_escrowCaptureUnanswered(t *testing.T) {
	noLeak(t)
	for _, tc := range []struct{ applied, recovery bool }{{false, true}, {true, true}, {false, false}, {true, false}} {
		applied := tc.applied
		s := newEscrowServer(t, openBalance, nil, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("Paris")) })
		fac := &unansweredCapture{Escrow: s.escrow, applied: applied}
		s.facilitate(t, fac)
		proof := s.proof(t)
		first, _ := s.paid(t, proof)
		if first.StatusCode != http.StatusPaymentRequired {
			t.Fatalf("applied %v: first use: status %d, want 402 (the capture failed)", applied, first.StatusCode)
		}
		if _, e := escrowOf(t, first); e.State != x402.EscrowHeld {
			t.Errorf("applied %v: first report %+v, want held", applied, e)
		}

		if tc.recovery { // the server's recovery finishes the payment by its verdict
			authorizer, _ := evm.ParsePrivateKey(acAuthorizerKey)
			rec := &escrow.Recovery{Ledger: s.ledger, Facilitator: fac, Authorizer: evm.ReceiverAuthorizer{Key: authorizer}}
			if _, err := rec.Finish(t.Context()); err != nil {
				t.Fatal(err)
			}
			if payer, _ := s.balances(); payer != openBalance-50_000 {
				t.Fatalf("applied %v: payer holds %d, want the capture of 50000", applied, payer)
			}
		}

		resp, body := s.paid(t, proof)
		sr, e := escrowOf(t, resp)
		got := []any{resp.StatusCode, body, sr.Success, e.State, e.Captured}
		want := []any{http.StatusOK, "Paris", true, x402.EscrowCaptured, "50000"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%+v: the retry (-want +got):\n%s", tc, diff)
		}
		if payer, _ := s.balances(); payer != openBalance-50_000 {
			t.Errorf("%+v: payer holds %d, want one capture of 50000", tc, payer)
		}
		if again, body := s.paid(t, proof); again.StatusCode != http.StatusOK || body != "Paris" {
			t.Errorf("%+v: another retry: %d %q", tc, again.StatusCode, body)
		}
		if n := s.runs.Load(); n != 1 {
			t.Errorf("applied %v: the handler ran %d times", applied, n)
		}
	}
}

// A pending capture is kept while the payer's later answers fill the
// outcome store: its answer is the only copy of what the capture the
// recovery sends buys, so no delivered outcome pushes it out.
func TestMiddleware_escrowCapturePendingKept(t *testing.T) {
	noLeak(t)
	outcomes := &x402.MemoryOutcomes{MaxEntries: 1}
	s := newEscrowServerWith(t, openBalance, nil, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("Paris")) },
		func(cfg *x402.MiddlewareConfig) { cfg.Outcomes = outcomes }, evm.TransferEIP3009)
	fac := &unansweredCapture{Escrow: s.escrow}
	s.facilitate(t, fac)
	pending := s.proof(t)
	if first, _ := s.paid(t, pending); first.StatusCode != http.StatusPaymentRequired {
		t.Fatalf("first use: status %d, want 402 (the capture went unanswered)", first.StatusCode)
	}
	if later, body := s.paid(t, s.proof(t)); later.StatusCode != http.StatusOK || body != "Paris" {
		t.Fatalf("the payer's next call: %d %q, want 200 Paris", later.StatusCode, body)
	}

	authorizer, _ := evm.ParsePrivateKey(acAuthorizerKey)
	rec := &escrow.Recovery{Ledger: s.ledger, Facilitator: fac, Authorizer: evm.ReceiverAuthorizer{Key: authorizer}}
	if _, err := rec.Finish(t.Context()); err != nil {
		t.Fatal(err)
	}
	resp, body := s.paid(t, pending)
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("the retry of the pending capture: %d %q, want 200 Paris", resp.StatusCode, body)
	}
	sr, e := escrowOf(t, resp)
	got := []any{body, sr.Success, e.State}
	want := []any{"Paris", true, x402.EscrowCaptured}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the retry of the pending capture (-want +got):\n%s", diff)
	}
	if payer, _ := s.balances(); payer != openBalance-2*50_000 {
		t.Errorf("payer holds %d, want two captures of 50000", payer)
	}
}

// The answer of a capture left unanswered is kept, with its proof, until
// the capture deadline, however short the authorization's own validity:
// the recovery may capture it until then, and the retry of the proof
// gets the answer it bought.
func TestMiddleware_escrowCapturePendingUntilDeadline(t *testing.T) {
	noLeak(t)
	start := time.Now()
	var clock atomic.Int64 // what the server's clock is ahead of the real one
	now := func() time.Time { return time.Now().Add(time.Duration(clock.Load())) }
	s := newEscrowServerWith(t, openBalance, nil, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("Paris")) },
		func(cfg *x402.MiddlewareConfig) { cfg.Now = now }, evm.TransferEIP3009)
	fac := &unansweredCapture{Escrow: s.escrow}
	s.facilitate(t, fac)
	proof := s.proof(t)
	if first, _ := s.paid(t, proof); first.StatusCode != http.StatusPaymentRequired {
		t.Fatalf("first use: status %d, want 402 (the capture went unanswered)", first.StatusCode)
	}

	// Two minutes on: the authorization (valid 60 s) has expired, the
	// capture deadline (ten minutes) has not.
	clock.Store(int64(2 * time.Minute))
	authorizer, _ := evm.ParsePrivateKey(acAuthorizerKey)
	rec := &escrow.Recovery{Ledger: s.ledger, Facilitator: fac, Authorizer: evm.ReceiverAuthorizer{Key: authorizer}, Now: now}
	done, err := rec.Finish(t.Context())
	if err != nil || len(done) != 1 || done[0].Outcome.Operation != x402.EscrowCapture || !done[0].Outcome.Settlement.Success {
		t.Fatalf("recovery at %s: %+v, %v; want the capture", now().Sub(start).Round(time.Minute), done, err)
	}
	resp, body := s.paid(t, proof)
	if resp.StatusCode != http.StatusOK || body != "Paris" {
		t.Fatalf("the retry after the recovery captured: %d %q, want 200 Paris", resp.StatusCode, body)
	}
	if _, e := escrowOf(t, resp); e.State != x402.EscrowCaptured {
		t.Errorf("the retry's report %+v, want captured", e)
	}
	if payer, _ := s.balances(); payer != openBalance-50_000 {
		t.Errorf("payer holds %d, want one capture of 50000", payer)
	}
}
