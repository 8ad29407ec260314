package x402_test

import (
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/escrow"
	"github.com/vouchkit/vouch/x402/evm"
	"github.com/vouchkit/vouch/x402/x402test"
)

// verdictRig is an escrow server whose first verdict waits (ledger), and
// a second server on the same ledger, replay store and outcome store.
type verdictRig struct {
	s      *escrowServer
	ledger *x402test.VerdictWaits
	other  *httptest.Server
}

func newVerdictRig(t *testing.T) *verdictRig {
	t.Helper()
	replay, outcomes := &x402.MemoryReplay{}, &x402.MemoryOutcomes{}
	v := &verdictRig{}
	v.s = newEscrowServerWith(t, openBalance, nil, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("Paris")) },
		func(cfg *x402.MiddlewareConfig) {
			v.ledger = x402test.NewVerdictWaits(cfg.Escrow.Ledger)
			cfg.Replay, cfg.Outcomes, cfg.Escrow.Ledger = replay, outcomes, v.ledger
		}, evm.TransferEIP3009)
	authorizer, _ := evm.ParsePrivateKey(acAuthorizerKey)
	mw, err := x402.Middleware(x402.MiddlewareConfig{Facilitator: viaServer{v.s}, Replay: replay, Outcomes: outcomes,
		Routes: map[string]x402.Price{"POST /paid": {Accepts: []x402.PaymentRequirements{v.s.offer}}},
		Escrow: &x402.EscrowConfig{Authorizer: evm.ReceiverAuthorizer{Key: authorizer}, Ledger: v.ledger}})
	if err != nil {
		t.Fatal(err)
	}
	v.other = httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		v.s.runs.Add(1)
		w.Write([]byte("Paris"))
	})))
	t.Cleanup(v.other.Close)
	return v
}

// answer is a response's status, Retry-After and body.
type answer struct {
	Status     int
	RetryAfter string
	Body       string
}

// The answer a capture buys is kept before the verdict that captures it
// is recorded. A retry that reaches another server while the first use
// records its verdict is answered 503 to come back, touching nothing;
// once the first use captured, the retry there gets the answer, the
// capture sent once and the payer charged once.
func TestMiddleware_escrowRetryBeforeTheVerdict(t *testing.T) {
	noLeak(t)
	v := newVerdictRig(t)
	proof := v.s.proof(t)
	first := make(chan answer, 1)
	go func() {
		resp, body := v.s.paid(t, proof)
		first <- answer{resp.StatusCode, "", body}
	}()
	<-v.ledger.Started
	resp, body := paidAt(t, v.other, proof)
	early := answer{resp.StatusCode, resp.Header.Get("Retry-After"), body}
	close(v.ledger.Release)
	firstUse := <-first
	resp, body = paidAt(t, v.other, proof)
	var state x402.EscrowState
	if resp.StatusCode == http.StatusOK {
		_, e := escrowOf(t, resp)
		state = e.State
	}
	payer, _ := v.s.balances()
	got := []any{strings.Contains(early.Body, "has not recorded its verdict"), early.Status, early.RetryAfter,
		firstUse, answer{resp.StatusCode, "", body}, state, payer, v.s.runs.Load()}
	want := []any{true, http.StatusServiceUnavailable, "1",
		answer{http.StatusOK, "", "Paris"}, answer{http.StatusOK, "", "Paris"}, x402.EscrowCaptured, int64(openBalance - 50_000), int32(1)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("early retry (names the verdict, status, Retry-After), first use, later retry, state, payer's balance, runs (-want +got):\n%s\nearly body: %s", diff, early.Body)
	}
}

// A payment whose first use stopped before it recorded its verdict is
// voided by the recovery; the retry of its proof, which finds the answer
// kept before the verdict, is answered 402 saying that nothing was
// bought, and the payer is charged nothing.
func TestMiddleware_escrowVoidedBeforeTheVerdict(t *testing.T) {
	noLeak(t)
	v := newVerdictRig(t)
	proof := v.s.proof(t)
	first := make(chan struct{})
	go func() {
		defer close(first)
		v.s.paid(t, proof)
	}()
	<-v.ledger.Started // the first use has stopped here, for the recovery
	authorizer, _ := evm.ParsePrivateKey(acAuthorizerKey)
	rec := &escrow.Recovery{Ledger: v.ledger.EscrowLedger, Facilitator: v.s.escrow, Authorizer: evm.ReceiverAuthorizer{Key: authorizer}, Grace: time.Nanosecond}
	if done, err := rec.Finish(t.Context()); err != nil || len(done) != 1 || done[0].Outcome.Operation != x402.EscrowVoid {
		t.Fatalf("recovery: %+v, %v; want the void", done, err)
	}
	resp, body := paidAt(t, v.other, proof)
	close(v.ledger.Release)
	<-first
	payer, _ := v.s.balances()
	got := []any{resp.StatusCode, strings.Contains(body, "voided without a verdict"), payer}
	want := []any{http.StatusPaymentRequired, true, int64(openBalance)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("retry's status, whether it says the payment was voided, payer's balance (-want +got):\n%s\nbody: %s", diff, body)
	}
}
