package x402_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// A server whose outcomes outlive it (x402/boltstore's Outcomes) and whose
// replay store does not (a MemoryReplay) answers the retry of a proof
// spent before its restart from the kept outcome: the payer gets the
// answer it paid for, charged once, and the handler does not run again.
func TestMiddleware_outcomeKeptAcrossRestartOfTheReplayStore(t *testing.T) {
	noLeak(t)
	outcomes := &x402.MemoryOutcomes{} // the durable store
	var cfg x402.MiddlewareConfig
	answer := func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("Paris")) }
	s := newEscrowServerWith(t, openBalance, nil, answer,
		func(c *x402.MiddlewareConfig) { c.Outcomes = outcomes; cfg = *c }, evm.TransferEIP3009)
	proof := s.proof(t)
	if first, body := s.paid(t, proof); first.StatusCode != http.StatusOK || body != "Paris" {
		t.Fatalf("first use: %d %q, want 200 Paris", first.StatusCode, body)
	}

	cfg.Replay = nil // restarted: the replay store in memory is new
	mw, err := x402.Middleware(cfg)
	if err != nil {
		t.Fatal(err)
	}
	restarted := httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.runs.Add(1)
		answer(w, r)
	})))
	defer restarted.Close()
	resp, body := paidAt(t, restarted, proof)
	var state x402.EscrowState
	if resp.StatusCode == http.StatusOK {
		_, e := escrowOf(t, resp)
		state = e.State
	}
	payer, _ := s.balances()
	got := []any{resp.StatusCode, body, state, payer, s.runs.Load()}
	want := []any{http.StatusOK, "Paris", x402.EscrowCaptured, int64(openBalance - 50_000), int32(1)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the retry on the restarted server (-want +got):\n%s", diff)
	}
}
