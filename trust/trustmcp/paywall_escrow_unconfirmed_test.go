package trustmcp_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/vouchkit/vouch/trust/trustmcp"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/escrow"
	"github.com/vouchkit/vouch/x402/x402test"
)

// newOutageRig is an escrow rig whose ledger and facilitator go down at
// the first verdict.
func newOutageRig(t *testing.T, recorded bool) (*escrowRig, *x402test.VerdictOutage) {
	var o *x402test.VerdictOutage
	r := newEscrowRigWith(t, func(cfg *trustmcp.PaywallConfig) {
		o = x402test.NewVerdictOutage(cfg.Escrow.Ledger, cfg.Facilitator, recorded)
		cfg.Escrow.Ledger, cfg.Facilitator = o, o
	})
	return r, o
}

// A verdict the ledger recorded but could not confirm, on a hold whose
// void could not be sent either, is the payment's verdict, which a
// recovery acts on: the result it buys is kept for the retry of the
// payment, which returns it once captured, whether the recovery captured
// it or the retry does.
func TestPaywall_escrowVerdictUnconfirmedVoidUnsent(t *testing.T) {
	for _, recovered := range []bool{true, false} {
		r, o := newOutageRig(t, true)
		open := r.bed.Balances()
		p := r.pay(t, "square")
		first, err := paidCall(context.Background(), t, r.cs, "square", 3, p)
		if err != nil {
			t.Fatal(err)
		}
		if !first.IsError || strings.Contains(text(first), `"square":9`) {
			t.Fatalf("recovered %v: first use %q, want a refusal without the square", recovered, text(first))
		}
		o.End()
		if recovered {
			rec := &escrow.Recovery{Ledger: r.ledger, Facilitator: r.bed.Facilitator, Authorizer: r.bed.Authorizer, Grace: time.Nanosecond}
			if _, err := rec.Finish(t.Context()); err != nil {
				t.Fatal(err)
			}
		}
		retriesBuy(t, r, p, open, fmt.Sprintf("recovered %v", recovered))
	}
}

// A verdict the ledger did not record, on a hold whose void could not be
// sent: the retry is told to come back while the hold stands, and that
// nothing was bought once a recovery voided it.
func TestPaywall_escrowVerdictUnrecordedVoidUnsent(t *testing.T) {
	r, o := newOutageRig(t, false)
	open := r.bed.Balances()
	p := r.pay(t, "square")
	if first, err := paidCall(context.Background(), t, r.cs, "square", 3, p); err != nil || !first.IsError || strings.Contains(text(first), `"square":9`) {
		t.Fatalf("first use %v %v, want a refusal without the square", first, err)
	}
	o.End()
	if again, err := paidCall(context.Background(), t, r.cs, "square", 3, p); err != nil || !again.IsError || !strings.Contains(text(again), "try again") {
		t.Errorf("retry while held: %q %v, want to try again", text(again), err)
	}
	rec := &escrow.Recovery{Ledger: r.ledger, Facilitator: r.bed.Facilitator, Authorizer: r.bed.Authorizer, Grace: time.Nanosecond}
	if _, err := rec.Finish(t.Context()); err != nil {
		t.Fatal(err)
	}
	again, err := paidCall(context.Background(), t, r.cs, "square", 3, p)
	if err != nil || !again.IsError || !strings.Contains(text(again), "nothing was bought") {
		t.Errorf("retry after the void: %q %v, want nothing bought", text(again), err)
	}
	if got := r.bed.Balances(); got != open {
		t.Errorf("balances %+v, want those before the hold %+v", got, open)
	}
}

// voidUnanswered is a facilitator that leaves every void unanswered.
type voidUnanswered struct{ x402.Facilitator }

func (f voidUnanswered) Settle(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.SettleResponse, error) {
	if strings.Contains(string(p.Payload), `"type":"void"`) {
		return nil, errors.New("facilitator timed out")
	}
	return f.Facilitator.Settle(ctx, p, r)
}

// A tool's failure whose void went unanswered is answered as the failure
// it is, and so is its retry: no result was bought, so none is kept for
// a capture.
func TestPaywall_escrowVoidUnanswered(t *testing.T) {
	r := newEscrowRigWith(t, func(cfg *trustmcp.PaywallConfig) { cfg.Facilitator = voidUnanswered{cfg.Facilitator} })
	p := r.pay(t, "fail")
	for i := range 2 {
		res, err := paidCall(context.Background(), t, r.cs, "fail", 3, p)
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError || !strings.Contains(text(res), "no") || strings.Contains(text(res), "capture") {
			t.Errorf("use %d: %q, want the tool's failure", i, text(res))
		}
	}
	if n := r.runs.Load(); n != 1 {
		t.Errorf("the tool ran %d times", n)
	}
}
