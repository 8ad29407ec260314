package x402_test

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/escrow"
	"github.com/vouchkit/vouch/x402/evm"
	"github.com/vouchkit/vouch/x402/x402test"
)

// newOutageServer is an escrow server answering "Paris", whose ledger
// and facilitator go down at the first verdict.
func newOutageServer(t *testing.T, recorded bool) (*escrowServer, *x402test.VerdictOutage) {
	t.Helper()
	var o *x402test.VerdictOutage
	s := newEscrowServerWith(t, openBalance, nil, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("Paris")) },
		func(cfg *x402.MiddlewareConfig) {
			o = x402test.NewVerdictOutage(cfg.Escrow.Ledger, nil, recorded)
			cfg.Escrow.Ledger = o
		}, evm.TransferEIP3009)
	o.Facilitator = s.escrow
	s.facilitate(t, o)
	return s, o
}

// A verdict the ledger recorded but could not confirm, on a hold whose
// void could not be sent either, is the payment's verdict, which a
// recovery acts on: the answer it buys is kept for the retry of the
// proof, which delivers it once captured, whether the recovery captured
// it or the retry does. Before, the route kept its refusal, and the
// recovery's capture charged the payer for an answer never delivered.
func TestMiddleware_escrowVerdictUnconfirmedVoidUnsent(t *testing.T) {
	noLeak(t)
	for _, recovered := range []bool{true, false} {
		s, o := newOutageServer(t, true)
		proof := s.proof(t)
		first, body := s.paid(t, proof)
		if first.StatusCode < 400 || strings.Contains(body, "Paris") {
			t.Fatalf("recovered %v: first use: %d %q; want a refusal without the answer (nothing captured yet)", recovered, first.StatusCode, body)
		}
		if _, e := escrowOf(t, first); e.State != x402.EscrowHeld {
			t.Errorf("recovered %v: first report %+v; want the hold still held", recovered, e)
		}
		o.End()
		if recovered {
			authorizer, _ := evm.ParsePrivateKey(acAuthorizerKey)
			rec := &escrow.Recovery{Ledger: s.ledger, Facilitator: s.escrow, Authorizer: evm.ReceiverAuthorizer{Key: authorizer}, Grace: time.Nanosecond}
			if _, err := rec.Finish(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
		resp, body := s.paid(t, proof)
		sr, e := escrowOf(t, resp)
		got := []any{resp.StatusCode, body, sr.Success, e.State, e.Captured}
		want := []any{http.StatusOK, "Paris", true, x402.EscrowCaptured, "50000"}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("recovered %v: the retry (-want +got):\n%s", recovered, diff)
		}
		if payer, _ := s.balances(); payer != openBalance-50_000 {
			t.Errorf("recovered %v: the payer holds %d, want one capture of 50000", recovered, payer)
		}
		if n := s.runs.Load(); n != 1 {
			t.Errorf("recovered %v: the handler ran %d times", recovered, n)
		}
	}
}

// A verdict the ledger did not record, on a hold whose void could not be
// sent: the retry of the proof is told to come back while the hold stands, and
// that nothing was bought once a recovery voided it.
func TestMiddleware_escrowVerdictUnrecordedVoidUnsent(t *testing.T) {
	noLeak(t)
	s, o := newOutageServer(t, false)
	proof := s.proof(t)
	if first, body := s.paid(t, proof); first.StatusCode < 400 || strings.Contains(body, "Paris") {
		t.Fatalf("first use: %d %q; want a refusal without the answer", first.StatusCode, body)
	}
	o.End()
	if resp, body := s.paid(t, proof); resp.StatusCode != http.StatusServiceUnavailable || strings.Contains(body, "Paris") {
		t.Errorf("retry while held: %d %q; want 503 without the answer", resp.StatusCode, body)
	}
	authorizer, _ := evm.ParsePrivateKey(acAuthorizerKey)
	rec := &escrow.Recovery{Ledger: s.ledger, Facilitator: s.escrow, Authorizer: evm.ReceiverAuthorizer{Key: authorizer}, Grace: time.Nanosecond}
	if _, err := rec.Finish(t.Context()); err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		resp, body := s.paid(t, proof)
		if resp.StatusCode != http.StatusPaymentRequired || !strings.Contains(body, "nothing was bought") {
			t.Errorf("retry %d after the void: %d %q; want 402 saying nothing was bought", i, resp.StatusCode, body)
		}
	}
	if payer, _ := s.balances(); payer != openBalance {
		t.Errorf("the payer holds %d, want %d", payer, openBalance)
	}
}

// voidUnanswered is an escrow whose voids go unanswered.
type voidUnanswered struct{ *evm.Escrow }

func (f voidUnanswered) Settle(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.SettleResponse, error) {
	if strings.Contains(string(p.Payload), `"type":"void"`) {
		return nil, errors.New("facilitator timed out")
	}
	return f.Escrow.Settle(ctx, p, r)
}

// A handler's failure whose void went unanswered is answered as the
// failure it is, and so is the retry of its proof: nothing was bought,
// so no answer is kept for a capture.
func TestMiddleware_escrowVoidUnanswered(t *testing.T) {
	noLeak(t)
	s := newEscrowServer(t, openBalance, nil, func(w http.ResponseWriter, r *http.Request) { http.Error(w, "no", http.StatusTeapot) })
	s.facilitate(t, voidUnanswered{s.escrow})
	proof := s.proof(t)
	for i := range 2 {
		resp, body := s.paid(t, proof)
		if resp.StatusCode != http.StatusTeapot || strings.Contains(body, "capture") {
			t.Errorf("use %d: %d %q, want the handler's failure", i, resp.StatusCode, body)
		}
	}
	if n := s.runs.Load(); n != 1 {
		t.Errorf("the handler ran %d times", n)
	}
}
