package trustmcp_test

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vouchkit/vouch/trust/trustmcp"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// faultySettle is the offline facilitator, whose first settlements fail:
// before it settles (the request lost on the way), or after (its answer
// lost on the way back), as lostAfter says. It counts the settlements
// asked of it. With hold set, a settlement that does not fail signals
// held and waits for hold to close before it is made.
type faultySettle struct {
	*evm.Facilitator
	failures   atomic.Int32 // settlements left to fail
	lostAfter  bool
	asked      atomic.Int32
	held, hold chan struct{}
}

func newFaultySettle(failures int32, lostAfter bool) *faultySettle {
	f := &faultySettle{Facilitator: &evm.Facilitator{}, lostAfter: lostAfter}
	f.failures.Store(failures)
	return f
}

func (f *faultySettle) Settle(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.SettleResponse, error) {
	f.asked.Add(1)
	if f.failures.Add(-1) >= 0 {
		if f.lostAfter {
			f.Facilitator.Settle(ctx, p, r)
		}
		return nil, errors.New("the facilitator did not answer")
	}
	if f.hold != nil {
		f.held <- struct{}{}
		<-f.hold
	}
	return f.Facilitator.Settle(ctx, p, r)
}

// settled returns the amounts the facilitator settled.
func (f *faultySettle) settled() []string {
	var amounts []string
	for _, s := range f.Settlements() {
		amounts = append(amounts, s.Amount)
	}
	return amounts
}

// failingAnswers is an answer store whose Keep fails while fail is set.
type failingAnswers struct {
	trustmcp.MemoryAnswers
	fail atomic.Bool
}

func (s *failingAnswers) Keep(ctx context.Context, key, payer string, answer []byte, until time.Time) error {
	if s.fail.Load() {
		return errors.New("the answer store is down")
	}
	return s.MemoryAnswers.Keep(ctx, key, payer, answer, until)
}

// settlingRig serves, over loopback Streamable HTTP behind a Paywall,
// three tools that settle after they run and count their runs: "square"
// and "gated", priced $0.005, the second with a gate that counts its
// checks and passes every result, and "metered", priced with an "upto"
// offer of at most $0.005 (5000 atomic units), which reports 2 runs for
// 2000.
type settlingRig struct {
	runs, checks atomic.Int32
	cs           *mcp.ClientSession
}

// settlingOffers returns the offers of the rig's tools: exact, then upto.
func settlingOffers(t *testing.T) (exact, upto x402.PaymentRequirements) {
	t.Helper()
	exact, err := evm.USDC("eip155:84532", "0x000000000000000000000000000000000000dEaD", "$0.005")
	if err != nil {
		t.Fatal(err)
	}
	upto, err = evm.UptoUSDC("eip155:84532", "0x000000000000000000000000000000000000dEaD", "$0.005", evm.OfflineFacilitatorAddress)
	if err != nil {
		t.Fatal(err)
	}
	return exact, upto
}

func newSettlingRig(t *testing.T, fac x402.Facilitator, answers trustmcp.AnswerStore) *settlingRig {
	t.Helper()
	return newSettlingRigAt(t, fac, answers, nil)
}

// newSettlingRigAt is newSettlingRig whose Paywall reads the clock now
// (nil: time.Now).
func newSettlingRigAt(t *testing.T, fac x402.Facilitator, answers trustmcp.AnswerStore, now func() time.Time) *settlingRig {
	t.Helper()
	exact, upto := settlingOffers(t)
	r := &settlingRig{}
	pay, err := trustmcp.Paywall(trustmcp.PaywallConfig{Facilitator: fac, Answers: answers, Now: now,
		Prices: map[string]x402.Price{
			"square":  {Accepts: []x402.PaymentRequirements{exact}},
			"gated":   {Accepts: []x402.PaymentRequirements{exact}},
			"metered": {Accepts: []x402.PaymentRequirements{upto}},
		},
		Gates: map[string]trustmcp.ToolGate{"gated": func(context.Context, *mcp.CallToolRequest, *mcp.CallToolResult) *mcp.CallToolResult {
			r.checks.Add(1)
			return nil
		}},
	})
	if err != nil {
		t.Fatal(err)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "settling", Version: "v0"}, nil)
	square := func(ctx context.Context, _ *mcp.CallToolRequest, in squareIn) (*mcp.CallToolResult, squareOut, error) {
		return nil, squareOut{Square: in.N * in.N, Run: int(r.runs.Add(1))}, nil
	}
	mcp.AddTool(s, &mcp.Tool{Name: "square"}, square)
	mcp.AddTool(s, &mcp.Tool{Name: "gated"}, square)
	mcp.AddTool(s, &mcp.Tool{Name: "metered"}, func(ctx context.Context, req *mcp.CallToolRequest, in squareIn) (*mcp.CallToolResult, squareOut, error) {
		if err := x402.ReportUsage(ctx, x402.Usage{Amount: 2000, Units: 2, Unit: "run"}); err != nil {
			return nil, squareOut{}, err
		}
		return square(ctx, req, in)
	})
	s.AddReceivingMiddleware(pay)
	r.cs = httpSession(t, s)
	return r
}

// call calls tool with the argument 3 and the payment p.
func (r *settlingRig) call(t *testing.T, tool string, p x402.PaymentPayload) *mcp.CallToolResult {
	t.Helper()
	res, err := paidCall(context.Background(), t, r.cs, tool, 3, p)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// wantSettlementFailed fails t unless res is the terms with a failed
// settlement whose reason holds reason.
func wantSettlementFailed(t *testing.T, res *mcp.CallToolResult, reason string) {
	t.Helper()
	pr := paidTerms(t, res)
	if !strings.HasPrefix(pr.Error, "settlement failed: ") || !strings.Contains(pr.Error, reason) {
		t.Errorf("refusal %q, want settlement failed: …%s…", pr.Error, reason)
	}
	if pr.Settlement == nil || pr.Settlement.Success {
		t.Errorf("settlement in the terms %+v, want the failed one", pr.Settlement)
	}
}

// A result whose settlement failed before the facilitator settled it is
// kept: the first call is refused "settlement failed", and the retry of
// the same call with the same payment settles it and gets the result,
// without running or checking it again; a later retry gets the same
// result and settlement. The facilitator settles once.
func TestPaywall_failedSettlementSettledByRetry(t *testing.T) {
	exact, _ := settlingOffers(t)
	for _, tool := range []string{"square", "gated"} {
		t.Run(tool, func(t *testing.T) {
			fac := newFaultySettle(1, false)
			r := newSettlingRig(t, fac, nil)
			p, _ := signedPayment(t, exact)
			wantSettlementFailed(t, r.call(t, tool, p), "unexpected_settle_error")
			if n := len(fac.Settlements()); n != 0 {
				t.Fatalf("%d settlements after the failed one, want 0", n)
			}
			first := answer(t, r.call(t, tool, p))
			if diff := cmp.Diff(first, answer(t, r.call(t, tool, p))); diff != "" {
				t.Errorf("a later retry (-first retry +later):\n%s", diff)
			}
			wantChecks := int32(0)
			if tool == "gated" {
				wantChecks = 1
			}
			got := []any{first.Structured, len(fac.Settlements()), r.runs.Load(), r.checks.Load()}
			want := []any{`{"run":1,"square":9}`, 1, int32(1), wantChecks}
			if diff := cmp.Diff(want, got); diff != "" {
				t.Errorf("the result, settlements, runs and checks (-want +got):\n%s", diff)
			}
		})
	}
}

// A settlement the facilitator made but whose answer was lost is never
// made twice: the retry sends it again, the facilitator refuses it as
// spent, and the retry is refused with that reason.
func TestPaywall_lostSettlementNeverSettledTwice(t *testing.T) {
	exact, _ := settlingOffers(t)
	fac := newFaultySettle(1, true)
	r := newSettlingRig(t, fac, nil)
	p, _ := signedPayment(t, exact)
	wantSettlementFailed(t, r.call(t, "gated", p), "unexpected_settle_error")
	wantSettlementFailed(t, r.call(t, "gated", p), evm.ReasonNonceAlreadyUsed)
	got := []int32{int32(len(fac.Settlements())), fac.asked.Load(), r.runs.Load(), r.checks.Load()}
	if diff := cmp.Diff([]int32{1, 2, 1, 1}, got); diff != "" {
		t.Errorf("settlements, settlements asked, runs and checks (-want +got):\n%s", diff)
	}
}

// A result the answer store cannot keep is not settled: the call is
// answered that payment processing is unavailable, and the payment is
// not spent: once the store works, the same payment buys the call, which
// runs again and settles once.
func TestPaywall_unkeptResultIsNotSettled(t *testing.T) {
	exact, _ := settlingOffers(t)
	fac := newFaultySettle(0, false)
	answers := &failingAnswers{}
	answers.fail.Store(true)
	r := newSettlingRig(t, fac, answers)
	p, _ := signedPayment(t, exact)
	res := r.call(t, "gated", p)
	if !res.IsError || !strings.Contains(text(res), "payment processing unavailable") || res.Meta[trustmcp.MetaPaymentResponse] != nil {
		t.Errorf("with the store down: %v %q, _meta %v; want unavailable, no settlement", res.IsError, text(res), res.Meta)
	}
	if n := fac.asked.Load(); n != 0 {
		t.Fatalf("%d settlements asked with the store down, want 0", n)
	}
	answers.fail.Store(false)
	got := answer(t, r.call(t, "gated", p))
	if diff := cmp.Diff([]any{`{"run":2,"square":9}`, 1, int32(2)}, []any{got.Structured, len(fac.Settlements()), r.runs.Load()}); diff != "" {
		t.Errorf("once the store works: the result, settlements and runs (-want +got):\n%s", diff)
	}
}

// The retry of an "upto" call whose settlement failed settles the usage
// the tool reported, not the authorized maximum, and reports it.
func TestPaywall_uptoRetrySettlesTheUsage(t *testing.T) {
	_, upto := settlingOffers(t)
	fac := newFaultySettle(1, false)
	r := newSettlingRig(t, fac, nil)
	p, _ := signedPayment(t, upto)
	wantSettlementFailed(t, r.call(t, "metered", p), "unexpected_settle_error")
	res := r.call(t, "metered", p)
	sr := settlementOf(t, res)
	u, _ := x402.UsageFromSettlement(&sr)
	got := []any{sr.Amount, u, fac.settled(), r.runs.Load()}
	want := []any{"2000", x402.Usage{Amount: 2000, Units: 2, Unit: "run", MaxAmount: 5000}, []string{"2000"}, int32(1)}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("the retry: amount, usage, settlements, runs (-want +got):\n%s", diff)
	}
}

// Two retries in one process of a call whose settlement failed settle it
// once: the second waits for the first, and gets the result it settled.
func TestPaywall_concurrentRetriesSettleOnce(t *testing.T) {
	exact, _ := settlingOffers(t)
	fac := newFaultySettle(1, false)
	fac.held, fac.hold = make(chan struct{}, 2), make(chan struct{})
	r := newSettlingRig(t, fac, nil)
	p, _ := signedPayment(t, exact)
	wantSettlementFailed(t, r.call(t, "square", p), "unexpected_settle_error")
	results := make(chan *mcp.CallToolResult, 2)
	retry := func() {
		res, err := paidCall(context.Background(), t, r.cs, "square", 3, p)
		if err != nil {
			t.Error(err)
		}
		results <- res
	}
	go retry()
	select {
	case <-fac.held: // the first retry settles
	case res := <-results:
		if res != nil {
			t.Errorf("the first retry settled nothing: %q", text(res))
		}
		return
	}
	go retry()
	time.Sleep(100 * time.Millisecond) // the second arrives meanwhile
	close(fac.hold)
	res := []*mcp.CallToolResult{<-results, <-results}
	if res[0] == nil || res[1] == nil {
		return
	}
	got := []answerOf{answer(t, res[0]), answer(t, res[1])}
	if diff := cmp.Diff(got[0], got[1]); diff != "" {
		t.Errorf("the two retries (-one +other):\n%s", diff)
	}
	counts := []int32{int32(len(fac.Settlements())), fac.asked.Load(), r.runs.Load()}
	if diff := cmp.Diff([]int32{1, 2, 1}, counts); diff != "" {
		t.Errorf("settlements, settlements asked and runs (-want +got):\n%s", diff)
	}
}

// A server whose replay store forgot the payment (one in memory,
// restarted) beside an answer store that outlived it (pgstore's) settles
// the result its first use kept before a failed settlement: the retry
// gets it, the tool run once and the facilitator settled once. Another
// process cannot tell a settlement under way from one answered: before
// the first use's settlement is due (its SettleTimeout), the retry there
// is told to come back, and sends none.
func TestPaywall_failedSettlementSettledAfterRestart(t *testing.T) {
	exact, _ := settlingOffers(t)
	fac := newFaultySettle(1, false)
	answers := &trustmcp.MemoryAnswers{} // the durable store
	before := newSettlingRig(t, fac, answers)
	p, _ := signedPayment(t, exact)
	wantSettlementFailed(t, before.call(t, "gated", p), "unexpected_settle_error")
	asked := fac.asked.Load()
	soon := newSettlingRig(t, fac, answers) // restarted at once: its replay store is new
	if res := soon.call(t, "gated", p); !res.IsError || !strings.Contains(text(res), "first use is settling it") || fac.asked.Load() != asked {
		t.Fatalf("the retry before the settlement is due: %q, %d settlements asked; want told to come back, none", text(res), fac.asked.Load()-asked)
	}
	later := func() time.Time { return time.Now().Add(x402.DefaultSettleTimeout + time.Second) }
	after := newSettlingRigAt(t, fac, answers, later) // restarted once it is due
	got := answer(t, after.call(t, "gated", p))
	counts := []any{got.Structured, len(fac.Settlements()), before.runs.Load() + soon.runs.Load() + after.runs.Load(), before.checks.Load() + soon.checks.Load() + after.checks.Load()}
	if diff := cmp.Diff([]any{`{"run":1,"square":9}`, 1, int32(1), int32(1)}, counts); diff != "" {
		t.Errorf("the retry on the restarted server: result, settlements, runs and checks (-want +got):\n%s", diff)
	}
}

// MemoryAnswers keeps a result kept while its payment settles in a
// budget of its own: the payer's own results and refusals, and another
// payer's, however many, do not push it out; the result kept once it
// settled replaces it.
func TestMemoryAnswers_settlingKeptApart(t *testing.T) {
	ctx := context.Background()
	now := time.Now()
	until := now.Add(time.Minute)
	s := &trustmcp.MemoryAnswers{MaxEntries: 2}
	if err := s.Keep(ctx, "k#settling", "0xa11ce", []byte(`{"settling":1}`), until); err != nil {
		t.Fatal(err)
	}
	for i := range 5 {
		for _, payer := range []string{"0xa11ce", "0xe7e"} {
			for _, suffix := range []string{"", "#refused"} {
				if err := s.Keep(ctx, payer+string(rune('0'+i))+suffix, payer, []byte(`{}`), until); err != nil {
					t.Fatal(err)
				}
			}
		}
	}
	if b, ok, _ := s.Answer(ctx, "k#settling", now); !ok || string(b) != `{"settling":1}` {
		t.Errorf("the result kept while it settles: %s %v, want it kept beside 20 results and refusals", b, ok)
	}
	before := s.Len() // the settled result pushes out one of the payer's
	if err := s.Keep(ctx, "k", "0xa11ce", []byte(`{"settled":1}`), until); err != nil {
		t.Fatal(err)
	}
	_, settling, _ := s.Answer(ctx, "k#settling", now)
	_, settled, _ := s.Answer(ctx, "k", now)
	if diff := cmp.Diff([]any{false, true, before - 1}, []any{settling, settled, s.Len()}); diff != "" {
		t.Errorf("once settled: settling kept, settled kept, Len (-want +got):\n%s", diff)
	}
}
