package escrow_test

import (
	"context"
	"errors"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/escrow"
	"github.com/vouchkit/vouch/x402/x402test"
)

// countingFacilitator counts the settles it relays.
type countingFacilitator struct {
	x402.Facilitator
	settles atomic.Int64
}

func (c *countingFacilitator) Settle(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.SettleResponse, error) {
	c.settles.Add(1)
	return c.Facilitator.Settle(ctx, p, r)
}

// holdN places n holds on bed and records them in l.
func holdN(t *testing.T, bed *x402test.EscrowBed, l x402.EscrowLedger, n int) []x402.EscrowPayment {
	t.Helper()
	var out []x402.EscrowPayment
	for i := range n {
		p, err := x402test.HoldEscrow(t.Context(), bed.Facilitator, bed.Offer, i)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := l.Hold(t.Context(), p); err != nil {
			t.Fatal(err)
		}
		out = append(out, p)
	}
	return out
}

// Recovery finishes each payment left held by its recorded verdict: the
// one without a verdict and the INVALID one voided, the VALID ones
// captured (a partial capture voiding the rest), a capture the
// facilitator refused voided; a payment held within the grace period is
// left to its server. A second run sends nothing.
func TestRecovery_finishesByVerdict(t *testing.T) {
	ctx := t.Context()
	bed := x402test.NewEscrowBed(t)
	l := &x402.MemoryEscrowLedger{}
	var ps []x402.EscrowPayment
	for i := range 5 {
		p, err := x402test.HoldEscrow(ctx, bed.Facilitator, bed.Offer, i)
		if err != nil {
			t.Fatal(err)
		}
		if i == 4 { // held just now, as recovery sees it
			p.HeldAt = p.HeldAt.Add(10 * time.Minute)
		}
		if _, _, err := l.Hold(ctx, p); err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	for i, d := range []struct{ verdict, capture string }{{}, {"VALID", "50000"}, {"VALID", "30000"}, {"INVALID", "0"}} {
		if d.verdict == "" {
			continue
		}
		if _, err := l.Decide(ctx, ps[i].ID, d.verdict, d.capture); err != nil {
			t.Fatal(err)
		}
	}
	const hold = x402test.EscrowHoldAmount
	young := ps[4]
	f := &countingFacilitator{Facilitator: bed.Facilitator}
	r := &escrow.Recovery{Ledger: l, Facilitator: f, Authorizer: bed.Authorizer, Grace: 5 * time.Minute, Now: func() time.Time { return young.HeldAt }}
	before := bed.Balances()
	done, err := r.Finish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{ps[0].ID: x402.EscrowVoid, ps[1].ID: x402.EscrowCapture, ps[2].ID: x402.EscrowCapture, ps[3].ID: x402.EscrowVoid}
	if len(done) != len(want) {
		t.Fatalf("Finish finished %d payments, want %d: %+v", len(done), len(want), done)
	}
	for _, d := range done {
		if want[d.ID] != d.Outcome.Operation || !d.Outcome.Settlement.Success || !d.Sent {
			t.Errorf("payment %s: %+v, want %s sent and successful", d.ID, d, want[d.ID])
		}
	}
	after := bed.Balances()
	captured := int64(50_000 + 30_000)
	if got, want := after, (x402test.EscrowBalances{Payer: before.Payer + 4*hold - captured, Escrow: before.Escrow - 4*hold, Receiver: before.Receiver + captured}); got != want {
		t.Errorf("balances after recovery %+v, want %+v (before %+v)", got, want, before)
	}
	if p, _ := l.Get(ctx, young.ID); p.State != x402.EscrowHeld {
		t.Errorf("the payment within its grace is %s, want held", p.State)
	}
	sent := f.settles.Load()
	if sent != 4 {
		t.Errorf("%d settles sent, want 4", sent)
	}
	again, err := r.Finish(ctx)
	if err != nil || len(again) != 0 || f.settles.Load() != sent || bed.Balances() != after {
		t.Errorf("second Finish: %+v, %v, %d more settles, balances %+v; want nothing done", again, err, f.settles.Load()-sent, bed.Balances())
	}
}

// NewRecovery takes the Middleware's escrow and leaves a payment
// without a verdict alone for twice the longest route's time budget and
// two settlements.
func TestNewRecovery(t *testing.T) {
	bed := x402test.NewEscrowBed(t)
	l := &x402.MemoryEscrowLedger{}
	cfg := x402.MiddlewareConfig{
		Facilitator: bed.Facilitator,
		Routes:      map[string]x402.Price{"POST /a": {TimeBudget: time.Minute}, "POST /b": {}},
		Escrow:      &x402.EscrowConfig{Authorizer: bed.Authorizer, Ledger: l},
	}
	r, err := escrow.NewRecovery(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if want := 2 * (time.Minute + 2*x402.DefaultSettleTimeout); r.Grace != want || r.Ledger != l {
		t.Errorf("Grace %v, want %v", r.Grace, want)
	}
	for name, broken := range map[string]func(*x402.MiddlewareConfig){
		"escrow":      func(c *x402.MiddlewareConfig) { c.Escrow = nil },
		"ledger":      func(c *x402.MiddlewareConfig) { c.Escrow = &x402.EscrowConfig{Authorizer: bed.Authorizer} },
		"authorizer":  func(c *x402.MiddlewareConfig) { c.Escrow = &x402.EscrowConfig{Ledger: l} },
		"facilitator": func(c *x402.MiddlewareConfig) { c.Facilitator = nil },
	} {
		c := cfg
		broken(&c)
		if _, err := escrow.NewRecovery(c); err == nil {
			t.Errorf("NewRecovery without a %s succeeded", name)
		}
	}
}

// A payment whose capture the facilitator refused (recorded, so not sent
// again) is voided by recovery, not left held until its payer reclaims it.
func TestRecovery_voidsARefusedCapture(t *testing.T) {
	ctx := t.Context()
	bed := x402test.NewEscrowBed(t)
	l := &x402.MemoryEscrowLedger{}
	p := holdN(t, bed, l, 1)[0]
	if _, err := l.Decide(ctx, p.ID, "VALID", p.Amount); err != nil {
		t.Fatal(err)
	}
	refused := x402.EscrowOutcome{Key: x402.EscrowCapture, Operation: x402.EscrowCapture, Amount: p.Amount,
		Settlement: x402.SettleResponse{ErrorReason: "invalid_auth_capture_evm_unexpected_state"}}
	if _, _, _, err := l.Record(ctx, p.ID, refused); err != nil {
		t.Fatal(err)
	}
	before := bed.Balances()
	r := &escrow.Recovery{Ledger: l, Facilitator: bed.Facilitator, Authorizer: bed.Authorizer}
	done, err := r.Finish(ctx)
	if err != nil || len(done) != 1 || done[0].Outcome.Operation != x402.EscrowVoid || !done[0].Outcome.Settlement.Success {
		t.Fatalf("Finish = %+v, %v; want the payment voided", done, err)
	}
	if got, want := bed.Balances(), before.Plus(x402test.EscrowHoldAmount, -x402test.EscrowHoldAmount, 0); got != want {
		t.Errorf("balances %+v, want %+v: the hold back with the payer", got, want)
	}
}

// A route priced per request (PriceFunc, as trustpay.Prices prices the
// trust call) may run as long as the capture window allows: recovery
// leaves its hold without a verdict alone that long, not the two minutes
// of the default.
func TestNewRecovery_pricedRoutes(t *testing.T) {
	ctx := t.Context()
	bed := x402test.NewEscrowBed(t)
	l := &x402.MemoryEscrowLedger{}
	cfg := x402.MiddlewareConfig{
		Facilitator: bed.Facilitator,
		PriceFunc: func(*http.Request) (x402.Price, bool) {
			return x402.Price{Accepts: []x402.PaymentRequirements{bed.Offer}, TimeBudget: 10 * time.Minute}, true
		},
		Escrow: &x402.EscrowConfig{Authorizer: bed.Authorizer, Ledger: l, CaptureWindow: 15 * time.Minute},
	}
	r, err := escrow.NewRecovery(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p := holdN(t, bed, l, 1)[0]
	r.Now = func() time.Time { return p.HeldAt.Add(3 * time.Minute) }
	if done, err := r.Finish(ctx); err != nil || len(done) != 0 {
		t.Errorf("Finish 3 minutes into a 10-minute budget = %+v, %v; want nothing finished", done, err)
	}
	if got, _ := l.Get(ctx, p.ID); got.State != x402.EscrowHeld {
		t.Errorf("the payment is %s, want held while its work may run", got.State)
	}
	if r.Grace < 15*time.Minute {
		t.Errorf("Grace %v, want at least the capture window", r.Grace)
	}
}

// hungFacilitator never answers a settle until its context ends.
type hungFacilitator struct{ x402.Facilitator }

func (hungFacilitator) Settle(ctx context.Context, _ *x402.PaymentPayload, _ x402.PaymentRequirements) (*x402.SettleResponse, error) {
	<-ctx.Done()
	return nil, ctx.Err()
}

// Recovery gives up on a facilitator that does not answer within half
// its claim, records nothing and leaves the payment held for the next
// run: a claim never lapses while its operation is still in flight, so
// that another server does not send the same operation meanwhile.
func TestRecovery_hungFacilitatorIsBounded(t *testing.T) {
	ctx := t.Context()
	bed := x402test.NewEscrowBed(t)
	l := &x402.MemoryEscrowLedger{}
	p := holdN(t, bed, l, 1)[0]
	if _, err := l.Decide(ctx, p.ID, "INVALID", "0"); err != nil {
		t.Fatal(err)
	}
	r := &escrow.Recovery{Ledger: l, Facilitator: hungFacilitator{bed.Facilitator}, Authorizer: bed.Authorizer, Claim: 200 * time.Millisecond}
	done, err := r.Finish(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || len(done) != 0 {
		t.Errorf("Finish = %+v, %v; want the settle abandoned at its deadline", done, err)
	}
	if got, _ := l.Get(ctx, p.ID); got.State != x402.EscrowHeld || len(got.Operations) != 0 {
		t.Errorf("after the abandoned void: %s, %+v; want held, nothing recorded", got.State, got.Operations)
	}
}

// A void the facilitator refuses for a reason that may pass is not the
// payment's outcome: it stays held, and the next run voids it.
func TestRecovery_retriesATransientRefusal(t *testing.T) {
	ctx := t.Context()
	bed := x402test.NewEscrowBed(t)
	l := &x402.MemoryEscrowLedger{}
	p := holdN(t, bed, l, 1)[0]
	if _, err := l.Decide(ctx, p.ID, "RETRY", "0"); err != nil {
		t.Fatal(err)
	}
	f := &refusingFacilitator{Facilitator: bed.Facilitator, reason: "unexpected_settle_error"}
	f.n.Store(1)
	r := &escrow.Recovery{Ledger: l, Facilitator: f, Authorizer: bed.Authorizer}
	if done, err := r.Finish(ctx); !errors.Is(err, x402.ErrEscrowRetryLater) || len(done) != 0 {
		t.Fatalf("first Finish = %+v, %v; want ErrEscrowRetryLater", done, err)
	}
	done, err := r.Finish(ctx)
	if err != nil || len(done) != 1 || done[0].Outcome.Operation != x402.EscrowVoid || !done[0].Outcome.Settlement.Success {
		t.Fatalf("second Finish = %+v, %v; want the payment voided", done, err)
	}
}
