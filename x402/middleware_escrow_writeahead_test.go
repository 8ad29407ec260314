package x402_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/escrow"
	"github.com/vouchkit/vouch/x402/evm"
)

// keptOutcome is one Keep of an OutcomeStore.
type keptOutcome struct {
	key     string
	outcome x402.Outcome
	until   time.Time
}

// recordedOutcomes is a MemoryOutcomes that records each Keep, so that a
// test can rebuild the store as it stood at any moment, as a store that
// outlives its server would hold it.
type recordedOutcomes struct {
	x402.MemoryOutcomes
	mu   sync.Mutex
	kept []keptOutcome
}

func (s *recordedOutcomes) Keep(ctx context.Context, key string, o x402.Outcome, until time.Time) error {
	s.mu.Lock()
	s.kept = append(s.kept, keptOutcome{key, o, until})
	s.mu.Unlock()
	return s.MemoryOutcomes.Keep(ctx, key, o, until)
}

// snapshot returns what was kept so far, and a store holding it.
func (s *recordedOutcomes) snapshot(t *testing.T) ([]keptOutcome, *x402.MemoryOutcomes) {
	s.mu.Lock()
	defer s.mu.Unlock()
	store := &x402.MemoryOutcomes{}
	for _, k := range s.kept {
		if err := store.Keep(context.Background(), k.key, k.outcome, k.until); err != nil {
			t.Error(err)
		}
	}
	return append([]keptOutcome(nil), s.kept...), store
}

// diesAtCapture is an escrow whose server dies as its first capture is
// sent: the capture is applied, and what the outcome store holds at that
// moment is all that outlives the server; the server never learns the
// capture's outcome.
type diesAtCapture struct {
	*evm.Escrow
	outcomes *recordedOutcomes
	t        *testing.T
	once     sync.Once
	kept     []keptOutcome        // what was kept before the capture
	survived *x402.MemoryOutcomes // the store as the capture found it
}

func (d *diesAtCapture) Settle(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.SettleResponse, error) {
	if !strings.Contains(string(p.Payload), `"type":"capture"`) {
		return d.Escrow.Settle(ctx, p, r)
	}
	first := false
	d.once.Do(func() {
		first = true
		d.kept, d.survived = d.outcomes.snapshot(d.t)
	})
	if !first {
		return d.Escrow.Settle(ctx, p, r)
	}
	d.Escrow.Settle(ctx, p, r)
	return nil, errors.New("the server died")
}

// A server that dies between its verdict and keeping the answer leaves
// the answer kept, as a pending capture: before the capture is sent, the
// store holds the answer it buys (status, body, usage) under the
// payment's id. The server restarted on the same ledger, replay store and
// outcome store captures the usage by its recorded verdict, and the
// retry of the proof gets the answer it paid for, the payer charged once.
func TestMiddleware_escrowAnswerKeptBeforeCapture(t *testing.T) {
	noLeak(t)
	replay := &x402.MemoryReplay{}
	outcomes := &recordedOutcomes{}
	answer := func(w http.ResponseWriter, r *http.Request) {
		if err := x402.ReportUsage(r.Context(), x402.Usage{Amount: 20_000, Units: 2, Unit: "run"}); err != nil {
			t.Error(err)
		}
		w.Write([]byte("Paris"))
	}
	s := newEscrowServerWith(t, openBalance, nil, answer,
		func(cfg *x402.MiddlewareConfig) { cfg.Replay, cfg.Outcomes = replay, outcomes }, evm.TransferEIP3009)
	fac := &diesAtCapture{Escrow: s.escrow, outcomes: outcomes, t: t}
	s.facilitate(t, fac)
	proof := s.proof(t)
	if first, _ := s.paid(t, proof); first.StatusCode != http.StatusPaymentRequired {
		t.Fatalf("first use: status %d, want 402 (the capture's outcome never came)", first.StatusCode)
	}
	held, err := s.ledger.Unfinished(t.Context(), 0)
	if err != nil || len(held) != 1 {
		t.Fatalf("Unfinished = %d payments, %v; want the one held", len(held), err)
	}
	var got []x402.Outcome
	for _, k := range fac.kept {
		got = append(got, k.outcome)
	}
	want := []x402.Outcome{{Payer: held[0].Payer, PendingCapture: held[0].ID, Usage: &x402.Usage{Amount: 20_000, Units: 2, Unit: "run", MaxAmount: 50_000},
		Response: x402.BufferedResponse{Status: http.StatusOK, Body: []byte("Paris")}}}
	if diff := cmp.Diff(want, got, cmpopts.IgnoreFields(x402.Outcome{}, "Request"), cmpopts.IgnoreFields(x402.BufferedResponse{}, "Header")); diff != "" {
		t.Errorf("kept before the capture (-want +got):\n%s", diff)
	}

	// The server restarts: what survived is the ledger, the replay store
	// and the outcome store as the capture found it.
	authorizer, _ := evm.ParsePrivateKey(acAuthorizerKey)
	cfg := x402.MiddlewareConfig{Facilitator: s.escrow, Replay: replay, Outcomes: fac.survived,
		Routes: map[string]x402.Price{"POST /paid": {Accepts: []x402.PaymentRequirements{s.offer}}},
		Escrow: &x402.EscrowConfig{Authorizer: evm.ReceiverAuthorizer{Key: authorizer}, Ledger: s.ledger}}
	mw, err := x402.Middleware(cfg)
	if err != nil {
		t.Fatal(err)
	}
	restarted := httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.runs.Add(1)
		answer(w, r)
	})))
	defer restarted.Close()
	rec := &escrow.Recovery{Ledger: s.ledger, Facilitator: s.escrow, Authorizer: evm.ReceiverAuthorizer{Key: authorizer}}
	if _, err := rec.Finish(t.Context()); err != nil {
		t.Fatal(err)
	}
	s.Server = restarted
	resp, body := s.paid(t, proof)
	var state x402.EscrowState
	if resp.StatusCode == http.StatusOK {
		_, e := escrowOf(t, resp)
		state = e.State
	}
	payer, _ := s.balances()
	gotRetry := []any{resp.StatusCode, body, state, payer, s.runs.Load()}
	wantRetry := []any{http.StatusOK, "Paris", x402.EscrowCaptured, int64(openBalance - 20_000), int32(1)}
	if diff := cmp.Diff(wantRetry, gotRetry); diff != "" {
		t.Errorf("the retry on the restarted server (-want +got):\n%s", diff)
	}
}

// captureHeld holds the first capture until release is closed.
type captureHeld struct {
	*evm.Escrow
	captures atomic.Int32
	started  chan struct{} // closed as the first capture arrives
	release  chan struct{}
}

func (c *captureHeld) Settle(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.SettleResponse, error) {
	if strings.Contains(string(p.Payload), `"type":"capture"`) && c.captures.Add(1) == 1 {
		close(c.started)
		<-c.release
	}
	return c.Escrow.Settle(ctx, p, r)
}

// ledgerRead is an escrow ledger that tells when a payment is read.
type ledgerRead struct {
	x402.EscrowLedger
	read func()
}

func (l ledgerRead) Get(ctx context.Context, id string) (x402.EscrowPayment, error) {
	l.read()
	return l.EscrowLedger.Get(ctx, id)
}

// lookedUp is a MemoryOutcomes that tells when an outcome is looked up.
type lookedUp struct {
	x402.MemoryOutcomes
	looked func()
}

func (s *lookedUp) Lookup(ctx context.Context, key string, now time.Time) (x402.Outcome, bool, error) {
	o, ok, err := s.MemoryOutcomes.Lookup(ctx, key, now)
	s.looked()
	return o, ok, err
}

// A retry that arrives while the first use's capture is under way finds
// the answer kept before the capture, and waits for the first use rather
// than complete the capture itself: the capture is sent once, and both
// get the answer.
func TestMiddleware_escrowRetryWaitsForTheCapture(t *testing.T) {
	noLeak(t)
	var once sync.Once
	fac := &captureHeld{started: make(chan struct{}), release: make(chan struct{})}
	free := func() { once.Do(func() { close(fac.release) }) }
	outcomes := &lookedUp{looked: func() {
		select {
		case <-fac.started: // the retry looked: it now waits, or reads the ledger
			// A retry that waits does nothing more to tell it: the
			// capture is let go a moment later.
			time.AfterFunc(50*time.Millisecond, free)
		default:
		}
	}}
	s := newEscrowServerWith(t, openBalance, nil, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("Paris")) },
		func(cfg *x402.MiddlewareConfig) {
			cfg.Outcomes = outcomes
			cfg.Escrow.Ledger = ledgerRead{cfg.Escrow.Ledger, func() {
				select {
				case <-fac.started: // the retry completes the capture itself
					free()
				default:
				}
			}}
		}, evm.TransferEIP3009)
	fac.Escrow = s.escrow
	s.facilitate(t, fac)
	proof := s.proof(t)
	type answer struct {
		Status int
		Body   string
	}
	firstDone := make(chan answer, 1)
	go func() {
		resp, body := s.paid(t, proof)
		firstDone <- answer{resp.StatusCode, body}
	}()
	<-fac.started
	resp, body := s.paid(t, proof)
	got := []any{<-firstDone, answer{resp.StatusCode, body}, fac.captures.Load()}
	want := []any{answer{http.StatusOK, "Paris"}, answer{http.StatusOK, "Paris"}, int32(1)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("first use, retry and captures sent (-want +got):\n%s", diff)
	}
}
