package x402_test

import (
	"context"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// faultySettle is a facilitator whose first settlements fail: before the
// facilitator settles (lost on the way), or after (the answer lost on
// the way back), as lostAfter says.
type faultySettle struct {
	*evm.Facilitator
	failures  atomic.Int32 // settlements left to fail
	lostAfter bool
}

func (f *faultySettle) Settle(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.SettleResponse, error) {
	if f.failures.Add(-1) < 0 {
		return f.Facilitator.Settle(ctx, p, r)
	}
	if f.lostAfter {
		f.Facilitator.Settle(ctx, p, r)
	}
	return nil, errors.New("the facilitator did not answer")
}

func faulty(failures int32, lostAfter bool) func(*evm.Facilitator) x402.Facilitator {
	return func(fac *evm.Facilitator) x402.Facilitator {
		f := &faultySettle{Facilitator: fac, lostAfter: lostAfter}
		f.failures.Store(failures)
		return f
	}
}

// TestGate_failedSettlementSettledByRetry: a delivery whose settlement
// failed before the facilitator settled it is answered 402, and its
// retry with the same proof settles it and gets the answer kept before
// the settlement, without running or checking it again; a later retry
// gets it too, settled once.
func TestGate_failedSettlementSettledByRetry(t *testing.T) {
	gs := newGatedServerVia(t, nil, faulty(1, false))
	v := proof(t, 2, nil)
	resp, body, err := postProof(t.Context(), gs.URL+"/gated", v, "call-1", "good")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusPaymentRequired || !strings.Contains(body, "settlement failed") {
		t.Fatalf("first use = %d %q, want 402 settlement failed", resp.StatusCode, body)
	}
	if n := len(gs.fac.Settlements()); n != 0 {
		t.Fatalf("%d settlements after the failed one, want 0", n)
	}
	var first string
	for i := range 2 {
		resp, body, err := postProof(t.Context(), gs.URL+"/gated", v, "call-1", "good")
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK || body != "good" || resp.Header.Get("Vouch-Status") != "VALID" {
			t.Fatalf("retry %d = %d %q, Vouch-Status %q; want the kept answer", i, resp.StatusCode, body, resp.Header.Get("Vouch-Status"))
		}
		settlement := resp.Header.Get(x402.HeaderPaymentResponse)
		if sr, err := x402.DecodeSettleResponse(settlement); err != nil || !sr.Success {
			t.Fatalf("retry %d: settlement %+v, %v", i, sr, err)
		}
		if i == 0 {
			first = settlement
		} else if settlement != first {
			t.Errorf("retry %d: settlement %q, want the first %q", i, settlement, first)
		}
	}
	if n := len(gs.fac.Settlements()); n != 1 {
		t.Errorf("%d settlements, want 1", n)
	}
	if r, c := gs.runs.Load(), gs.checks.Load(); r != 1 || c != 1 {
		t.Errorf("handler ran %d times, checked %d times; want once each", r, c)
	}
}

// TestGate_lostSettlementNeverSettledTwice: a settlement the facilitator
// made but whose answer was lost is not made again by the retry, which
// sends it again and is answered 402 with the facilitator's reason.
func TestGate_lostSettlementNeverSettledTwice(t *testing.T) {
	gs := newGatedServerVia(t, nil, faulty(1, true))
	v := proof(t, 2, nil)
	for i, want := range []string{"settlement failed", evm.ReasonNonceAlreadyUsed} {
		resp, body, err := postProof(t.Context(), gs.URL+"/gated", v, "call-1", "good")
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusPaymentRequired || !strings.Contains(body, want) {
			t.Errorf("use %d = %d %q, want 402 naming %q", i, resp.StatusCode, body, want)
		}
	}
	if n := len(gs.fac.Settlements()); n != 1 {
		t.Errorf("%d settlements, want 1", n)
	}
	if r := gs.runs.Load(); r != 1 {
		t.Errorf("handler ran %d times, want once", r)
	}
}

// failingKeep is a MemoryOutcomes whose Keep fails while fail is set,
// of every outcome, or of those only names when it is set.
type failingKeep struct {
	x402.MemoryOutcomes
	fail atomic.Bool
	only func(x402.Outcome) bool
}

func (f *failingKeep) Keep(ctx context.Context, key string, o x402.Outcome, until time.Time) error {
	if f.fail.Load() && (f.only == nil || f.only(o)) {
		return errors.New("the store is down")
	}
	return f.MemoryOutcomes.Keep(ctx, key, o, until)
}

// TestGate_unkeptAnswerIsNotSettled: an answer the outcome store cannot
// keep is not settled, nor sent: the first use is answered 503 and the
// proof is not spent, so that once the store is back its retry is served
// and settled once.
func TestGate_unkeptAnswerIsNotSettled(t *testing.T) {
	store := &failingKeep{}
	store.fail.Store(true)
	gs := newGatedServerWith(t, store)
	v := proof(t, 2, nil)
	resp, body, err := postProof(t.Context(), gs.URL+"/gated", v, "call-1", "good")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get(x402.HeaderPaymentResponse) != "" {
		t.Fatalf("first use = %d %q with settlement %q, want 503 and none", resp.StatusCode, body, resp.Header.Get(x402.HeaderPaymentResponse))
	}
	if n := len(gs.fac.Settlements()); n != 0 {
		t.Fatalf("%d settlements of an answer not kept, want 0", n)
	}
	store.fail.Store(false)
	resp, body, err = postProof(t.Context(), gs.URL+"/gated", v, "call-1", "good")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK || body != "good" || resp.Header.Get(x402.HeaderPaymentResponse) == "" {
		t.Fatalf("retry = %d %q, want 200 with a settlement", resp.StatusCode, body)
	}
	if n := len(gs.fac.Settlements()); n != 1 {
		t.Errorf("%d settlements, want 1", n)
	}
}

// TestGate_uptoRetrySettlesTheUsage: the retry of an "upto" delivery
// whose settlement failed settles the usage the handler reported, not
// the maximum the payer authorized.
func TestGate_uptoRetrySettlesTheUsage(t *testing.T) {
	fac := &evm.Facilitator{}
	o := uptoOffer(t)
	deliver := func(context.Context, *http.Request, []byte, *x402.BufferedResponse) x402.Delivery {
		return x402.Delivery{Deliver: true}
	}
	mw, err := x402.Middleware(x402.MiddlewareConfig{
		Facilitator: faulty(1, false)(fac),
		Routes:      map[string]x402.Price{"POST /metered": {Accepts: []x402.PaymentRequirements{o}, Gate: &x402.DeliveryGate{Check: deliver}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	var runs atomic.Int32
	srv := httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		runs.Add(1)
		x402.ReportUsage(r.Context(), x402.Usage{Amount: 1000, Units: 1, Unit: "run"})
		io.WriteString(w, "one run")
	})))
	t.Cleanup(srv.Close)
	pr, err := newPayer(t).Pay(t.Context(), o)
	if err != nil {
		t.Fatal(err)
	}
	v, err := x402.EncodeHeader(x402.PaymentPayload{X402Version: 2, Accepted: o, Payload: pr.Payload})
	if err != nil {
		t.Fatal(err)
	}
	for i, want := range []int{http.StatusPaymentRequired, http.StatusOK} {
		resp, body, err := postProof(t.Context(), srv.URL+"/metered", v, "call-1", "q")
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != want {
			t.Fatalf("use %d = %d %q, want %d", i, resp.StatusCode, body, want)
		}
	}
	if s := fac.Settlements(); len(s) != 1 || s[0].Amount != "1000" {
		t.Errorf("settlements = %+v, want one of 1000", s)
	}
	if n := runs.Load(); n != 1 {
		t.Errorf("handler ran %d times, want once", n)
	}
}

// unpaidBlind is an OutcomeStore that keeps every field of an outcome but
// Unpaid, as a store that keeps the fields it knew of before it does,
// and as a server of an earlier version reads a shared store.
type unpaidBlind struct{ x402.MemoryOutcomes }

func (s *unpaidBlind) Keep(ctx context.Context, key string, o x402.Outcome, until time.Time) error {
	o.Unpaid = nil
	return s.MemoryOutcomes.Keep(ctx, key, o, until)
}

// TestGate_unpaidAnswerNeverSentUnpaid: a reader that does not know
// Outcome.Unpaid finds an answer kept while it settles as a 503 asking
// for the request again, never the answer without its payment.
func TestGate_unpaidAnswerNeverSentUnpaid(t *testing.T) {
	gs := newGatedServerVia(t, &unpaidBlind{}, faulty(1, false))
	v := proof(t, 2, nil)
	var got []int
	for range 2 {
		resp, _, err := postProof(t.Context(), gs.URL+"/gated", v, "call-1", "good")
		if err != nil {
			t.Fatal(err)
		}
		got = append(got, resp.StatusCode)
	}
	got = append(got, len(gs.fac.Settlements()))
	if diff := cmp.Diff([]int{http.StatusPaymentRequired, http.StatusServiceUnavailable, 0}, got); diff != "" {
		t.Errorf("first use, its retry, and settlements (-want +got):\n%s", diff)
	}
}

// TestGate_settledButUnkeptDeliveredOnRetry: a settlement that went
// through and was recorded in the replay store, whose delivered outcome
// the store failed to keep, is not sent again (the facilitator would
// refuse it as spent): the retry of the same request gets the answer
// with the first settlement.
func TestGate_settledButUnkeptDeliveredOnRetry(t *testing.T) {
	store := &failingKeep{only: func(o x402.Outcome) bool { return o.Delivered }}
	store.fail.Store(true)
	gs := newGatedServerWith(t, store)
	v := proof(t, 2, nil)
	resp, body, err := postProof(t.Context(), gs.URL+"/gated", v, "call-1", "good")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusOK {
		t.Fatalf("first use = %d %q, want 200", resp.StatusCode, body)
	}
	first := resp.Header.Get(x402.HeaderPaymentResponse)
	store.fail.Store(false)
	resp, body, err = postProof(t.Context(), gs.URL+"/gated", v, "call-1", "good")
	if err != nil {
		t.Fatal(err)
	}
	got := []any{resp.StatusCode, body, resp.Header.Get(x402.HeaderPaymentResponse), len(gs.fac.Settlements())}
	if diff := cmp.Diff([]any{http.StatusOK, "good", first, 1}, got); diff != "" {
		t.Errorf("the retry's status, body, settlement, and settlements (-want +got):\n%s", diff)
	}
}

// TestGate_retryOnAnotherServerWaitsForTheSettlement: two servers share
// their replay and outcome stores. A retry that reaches the second while
// the first still settles the proof is answered 503 with Retry-After,
// and sends no settlement of its own; once the first has settled, the
// retry gets the answer with that settlement.
func TestGate_retryOnAnotherServerWaitsForTheSettlement(t *testing.T) {
	fac := &evm.Facilitator{}
	held := &heldSettlement{Facilitator: fac, settling: make(chan struct{}), proceed: make(chan struct{})}
	replay, outcomes := &x402.MemoryReplay{}, &x402.MemoryOutcomes{}
	deliver := func(context.Context, *http.Request, []byte, *x402.BufferedResponse) x402.Delivery {
		return x402.Delivery{Deliver: true}
	}
	var runs atomic.Int32
	urls := make([]string, 2)
	for i, f := range []x402.Facilitator{held, fac} {
		mw, err := x402.Middleware(x402.MiddlewareConfig{Facilitator: f, Replay: replay, Outcomes: outcomes,
			Routes: map[string]x402.Price{"POST /gated": {Accepts: []x402.PaymentRequirements{offer(t)}, Gate: &x402.DeliveryGate{Check: deliver}}}})
		if err != nil {
			t.Fatal(err)
		}
		srv := httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			runs.Add(1)
			io.WriteString(w, "Paris")
		})))
		t.Cleanup(srv.Close)
		urls[i] = srv.URL
	}
	v := proof(t, 2, nil)
	first := make(chan int, 1)
	go func() {
		resp, _, err := postProof(t.Context(), urls[0]+"/gated", v, "call-1", "q")
		if err != nil {
			t.Error(err)
			first <- 0
			return
		}
		first <- resp.StatusCode
	}()
	<-held.settling
	resp, _, err := postProof(t.Context(), urls[1]+"/gated", v, "call-1", "q")
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusServiceUnavailable || resp.Header.Get("Retry-After") == "" || len(fac.Settlements()) != 0 {
		t.Errorf("retry while the first use settles = %d, Retry-After %q, %d settlements; want 503, a Retry-After, none",
			resp.StatusCode, resp.Header.Get("Retry-After"), len(fac.Settlements()))
	}
	close(held.proceed)
	if s := <-first; s != http.StatusOK {
		t.Fatalf("first use = %d, want 200", s)
	}
	resp, body, err := postProof(t.Context(), urls[1]+"/gated", v, "call-1", "q")
	if err != nil {
		t.Fatal(err)
	}
	got := []any{resp.StatusCode, body, resp.Header.Get(x402.HeaderPaymentResponse) != "", len(fac.Settlements()), runs.Load()}
	if diff := cmp.Diff([]any{http.StatusOK, "Paris", true, 1, int32(1)}, got); diff != "" {
		t.Errorf("the retry once settled: status, body, settlement, settlements, runs (-want +got):\n%s", diff)
	}
}
