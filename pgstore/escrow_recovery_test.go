package pgstore_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/pgstore"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/escrow"
	"github.com/vouchkit/vouch/x402/evm"
	"github.com/vouchkit/vouch/x402/x402test"
)

// clock is a test's time, moved by hand.
type clock struct {
	mu  sync.Mutex
	now time.Time
}

func (c *clock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *clock) Add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
}

// slowFacilitator takes took of the clock for each settle, and runs
// during, if set, in the middle of its n-th settle.
type slowFacilitator struct {
	x402.Facilitator
	clock   *clock
	took    time.Duration
	settles atomic.Int64
	n       int64
	during  func()
}

func (s *slowFacilitator) Settle(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.SettleResponse, error) {
	s.clock.Add(s.took)
	if s.settles.Add(1) == s.n && s.during != nil {
		s.during()
	}
	return s.Facilitator.Settle(ctx, p, r)
}

// A recovery finishing several payments claims each as it reaches it:
// the claim on the third lasts the claim from the moment it is taken,
// not from the start of the run, so that a second server recovering
// while the third's capture is in flight (each capture taking just under
// half the claim, as a recovery allows) leaves it alone. The capture is
// sent once, and the payer pays each payment once.
func TestEscrowLedger_recoveryClaimsWhenItSends(t *testing.T) {
	ctx := t.Context()
	dbs := openDBs(t, 2)
	bed := x402test.NewEscrowBed(t)
	var ids []string
	for i := range 3 {
		p, err := x402test.HoldEscrow(ctx, bed.Facilitator, bed.Offer, i)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := dbs[0].Escrow().Hold(ctx, p); err != nil {
			t.Fatal(err)
		}
		if _, err := dbs[0].Escrow().Decide(ctx, p.ID, "VALID", p.Amount); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, p.ID)
	}
	before := bed.Balances()
	c := &clock{now: time.Now()}
	const claim = time.Minute
	other := &slowFacilitator{Facilitator: bed.Facilitator, clock: c}
	second := &escrow.Recovery{Ledger: dbs[1].Escrow(), Facilitator: other, Authorizer: bed.Authorizer, Claim: claim, Now: c.Now}
	var secondDone []escrow.Finished
	first := &slowFacilitator{Facilitator: bed.Facilitator, clock: c, took: claim/2 - time.Second, n: 3, during: func() {
		var err error
		if secondDone, err = second.Finish(ctx); err != nil {
			t.Errorf("the second server's Finish: %v", err)
		}
	}}
	r := &escrow.Recovery{Ledger: dbs[0].Escrow(), Facilitator: first, Authorizer: bed.Authorizer, Claim: claim, Now: c.Now}
	done, err := r.Finish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(done) != 3 || len(secondDone) != 0 {
		t.Errorf("the first server finished %d payments, the second %d: %+v; want 3 and 0", len(done), len(secondDone), secondDone)
	}
	if got := first.settles.Load() + other.settles.Load(); got != 3 {
		t.Errorf("%d captures sent, want 3: one per payment", got)
	}
	const hold = x402test.EscrowHoldAmount
	if got, want := bed.Balances(), before.Plus(0, -3*hold, 3*hold); got != want {
		t.Errorf("balances %+v, want %+v: three captures", got, want)
	}
	for _, id := range ids {
		p, err := dbs[1].Escrow().Get(ctx, id)
		if err != nil || p.State != x402.EscrowCaptured || len(p.Operations) != 1 {
			t.Errorf("payment %s: %s with %d operations, %v; want captured once", id, p.State, len(p.Operations), err)
		}
	}
}

// captureDuring passes every settle to the facilitator, and runs during
// once, in the route's capture: before the capture reaches the
// facilitator, or after it answered and before the route records it.
type captureDuring struct {
	x402.Facilitator
	after  bool
	once   sync.Once
	during func()
}

func (f *captureDuring) Settle(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.SettleResponse, error) {
	if !strings.Contains(string(p.Payload), `"type":"capture"`) {
		return f.Facilitator.Settle(ctx, p, r)
	}
	if !f.after {
		f.once.Do(f.during)
	}
	sr, err := f.Facilitator.Settle(ctx, p, r)
	if f.after {
		f.once.Do(f.during)
	}
	return sr, err
}

// One server's route captures a payment while another server's recovery
// finds it held with its verdict recorded, and captures it too: the
// escrow answers the second capture as the first, the ledger records one
// capture, the payer pays once and the buyer gets the answer, whichever
// of the two reaches the escrow first.
func TestEscrowLedger_recoveryDuringRouteCapture(t *testing.T) {
	for _, after := range []bool{false, true} {
		t.Run(fmt.Sprintf("after=%v", after), func(t *testing.T) {
			dbs := openDBs(t, 2)
			bed := x402test.NewEscrowBed(t)
			counted := &countingSettles{Facilitator: bed.Facilitator}
			recovery := &escrow.Recovery{Ledger: dbs[1].Escrow(), Facilitator: counted, Authorizer: bed.Authorizer}
			var recovered []escrow.Finished
			fac := &captureDuring{Facilitator: counted, after: after, during: func() {
				var err error
				if recovered, err = recovery.Finish(context.Background()); err != nil {
					t.Errorf("the second server's Finish: %v", err)
				}
			}}
			mw, err := x402.Middleware(x402.MiddlewareConfig{Facilitator: fac, Replay: dbs[0].Replay(), Outcomes: dbs[0].Outcomes(),
				Escrow: &x402.EscrowConfig{Authorizer: bed.Authorizer, Ledger: dbs[0].Escrow()},
				Routes: map[string]x402.Price{"POST /paid": {Accepts: []x402.PaymentRequirements{bed.Offer}}}})
			if err != nil {
				t.Fatal(err)
			}
			srv := httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { io.WriteString(w, "Paris") })))
			t.Cleanup(srv.Close)
			before := bed.Balances()
			payer, _ := evm.NewPayer(testPayerKey)
			client := &http.Client{Transport: &x402.Transport{Payer: payer, Policy: x402.Policy{Schemes: []string{x402.SchemeAuthCapture}}}}
			resp, err := client.Post(srv.URL+"/paid", "text/plain", strings.NewReader("q"))
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			sr, _ := x402.DecodeSettleResponse(resp.Header.Get(x402.HeaderPaymentResponse))
			e, _ := x402.EscrowFromSettlement(sr)
			p, err := dbs[1].Escrow().Get(context.Background(), e.ID)
			if err != nil {
				t.Fatal(err)
			}
			if len(recovered) != 1 {
				t.Fatalf("the recovery finished %+v, want the payment", recovered)
			}
			const hold = x402test.EscrowHoldAmount
			got := []any{resp.StatusCode, string(body), e.State, len(p.Operations), p.State, recovered[0].Outcome.Settlement.Transaction, counted.captures.Load(), bed.Balances()}
			want := []any{http.StatusOK, "Paris", x402.EscrowCaptured, 1, x402.EscrowCaptured, sr.Transaction, int64(2), before.Plus(-hold, 0, hold)}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("(-want +got):\n%s", diff)
			}
		})
	}
}

// countingSettles counts the captures it relays.
type countingSettles struct {
	x402.Facilitator
	captures atomic.Int64
}

func (c *countingSettles) Settle(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.SettleResponse, error) {
	if strings.Contains(string(p.Payload), `"type":"capture"`) {
		c.captures.Add(1)
	}
	return c.Facilitator.Settle(ctx, p, r)
}

// A recovery judges a payment without a verdict by the time it listed
// it: one held within the grace then is left to its route, though the
// run reaches it after the grace, when the route may have recorded its
// verdict since the listing and be capturing it.
func TestEscrowLedger_recoveryGraceAtListing(t *testing.T) {
	ctx := t.Context()
	db := openDB(t)
	bed := x402test.NewEscrowBed(t)
	c := &clock{now: time.Now()}
	var ps []x402.EscrowPayment
	for i := range 2 {
		p, err := x402test.HoldEscrow(ctx, bed.Facilitator, bed.Offer, i)
		if err != nil {
			t.Fatal(err)
		}
		p.HeldAt = c.Now().Add(time.Duration(i-2) * time.Minute) // 2 and 1 minutes ago
		if _, _, err := db.Escrow().Hold(ctx, p); err != nil {
			t.Fatal(err)
		}
		ps = append(ps, p)
	}
	if _, err := db.Escrow().Decide(ctx, ps[0].ID, "VALID", ps[0].Amount); err != nil {
		t.Fatal(err)
	}
	f := &slowFacilitator{Facilitator: bed.Facilitator, clock: c, took: 90 * time.Second, n: 1, during: func() {
		// The second payment's route records its verdict, within the
		// grace, while the first is captured.
		if _, err := db.Escrow().Decide(ctx, ps[1].ID, "VALID", ps[1].Amount); err != nil {
			t.Error(err)
		}
	}}
	r := &escrow.Recovery{Ledger: db.Escrow(), Facilitator: f, Authorizer: bed.Authorizer, Grace: 2 * time.Minute, Claim: 4 * time.Minute, Now: c.Now}
	done, err := r.Finish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(done) != 1 || done[0].ID != ps[0].ID {
		t.Errorf("Finish finished %+v, want the first payment only", done)
	}
	p, err := db.Escrow().Get(ctx, ps[1].ID)
	if err != nil || p.State != x402.EscrowHeld || len(p.Operations) != 0 {
		t.Errorf("the second payment: %s with %+v, %v; want it held for its route", p.State, p.Operations, err)
	}
}

// listThen is a ledger that runs then once it listed the unfinished
// payments, before the recovery reaches them.
type listThen struct {
	*pgstore.EscrowLedger
	then func()
}

func (l listThen) Unfinished(ctx context.Context, limit int) ([]x402.EscrowPayment, error) {
	ps, err := l.EscrowLedger.Unfinished(ctx, limit)
	l.then()
	return ps, err
}

// A server's recovery lists a payment held with its verdict; before it
// reaches it, the route on another server captures it and a dispute
// there refunds it. The recovery leaves it alone: the payment is
// captured once and refunded once, and the ledger says so.
func TestEscrowLedger_recoveryAfterDisputeRefund(t *testing.T) {
	ctx := t.Context()
	dbs := openDBs(t, 2)
	bed := x402test.NewEscrowBed(t)
	p, err := x402test.HoldEscrow(ctx, bed.Facilitator, bed.Offer, 0)
	if err != nil {
		t.Fatal(err)
	}
	route := dbs[0].Escrow()
	if _, _, err := route.Hold(ctx, p); err != nil {
		t.Fatal(err)
	}
	if _, err := route.Decide(ctx, p.ID, "VALID", p.Amount); err != nil {
		t.Fatal(err)
	}
	before := bed.Balances()
	d := &escrow.Disputes{Ledger: route, Facilitator: bed.Facilitator, Authorizer: bed.Authorizer, Policy: escrow.RefundWhole}
	var refund x402.EscrowOutcome
	counted := &countingSettles{Facilitator: bed.Facilitator}
	r := &escrow.Recovery{Authorizer: bed.Authorizer, Facilitator: counted, Ledger: listThen{dbs[1].Escrow(), func() {
		if _, _, err := x402.SettleEscrow(ctx, route, bed.Facilitator, bed.Authorizer, p.ID, x402.EscrowCapture, x402.EscrowCapture, p.Amount); err != nil {
			t.Fatal(err)
		}
		d.Paid("alice", p.ID, "trace-0")
		var refunded bool
		if refund, refunded, err = d.Report(ctx, "alice", "trace-0", false); err != nil || !refunded {
			t.Fatalf("Report = %+v, %v, %v; want a refund", refund, refunded, err)
		}
	}}}
	done, err := r.Finish(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got, err := dbs[1].Escrow().Get(ctx, p.ID)
	if err != nil {
		t.Fatal(err)
	}
	const hold = x402test.EscrowHoldAmount
	ops := []string{}
	for _, o := range got.Operations {
		ops = append(ops, o.Key)
	}
	gotAll := []any{len(done), counted.captures.Load(), got.State, got.Refunded, ops, bed.Balances()}
	wantAll := []any{0, int64(0), x402.EscrowRefunded, fmt.Sprint(hold), []string{x402.EscrowCapture, escrow.DisputeKey}, before.Plus(hold, -hold, hold)}
	if diff := cmp.Diff(wantAll, gotAll); diff != "" {
		t.Errorf("(-want +got):\n%s", diff)
	}
}
