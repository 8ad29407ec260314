package trustmcp_test

import (
	"context"
	"encoding/json"
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

type squareIn struct {
	N int `json:"n"`
}

type squareOut struct {
	Square int `json:"square"`
	Run    int `json:"run"` // how many times the tool ran, this run included
}

// replayRig is a server with two priced tools, "square" and "cube", that
// count their runs, behind a Paywall.
type replayRig struct {
	fac  *countingFacilitator
	runs atomic.Int32
	gate chan struct{} // when not nil, square waits for it to close
	in   chan struct{} // when not nil, square signals it started
	fail atomic.Bool   // when set, square fails (after the gate)
	srv  *mcp.Server
	pr   trustmcp.PaymentRequired
}

func newReplayRig(t *testing.T, cfg trustmcp.PaywallConfig) *replayRig {
	t.Helper()
	offer, err := evm.USDC("base-sepolia", "0x000000000000000000000000000000000000dEaD", "$0.005")
	if err != nil {
		t.Fatal(err)
	}
	r := &replayRig{fac: &countingFacilitator{}}
	if cfg.Facilitator == nil {
		cfg.Facilitator = r.fac
	}
	cfg.Prices = map[string]x402.Price{
		"square": {Accepts: []x402.PaymentRequirements{offer}},
		"cube":   {Accepts: []x402.PaymentRequirements{offer}},
	}
	pay, err := trustmcp.Paywall(cfg)
	if err != nil {
		t.Fatal(err)
	}
	r.srv = mcp.NewServer(&mcp.Implementation{Name: "square", Version: "v0"}, nil)
	mcp.AddTool(r.srv, &mcp.Tool{Name: "square"}, func(ctx context.Context, _ *mcp.CallToolRequest, in squareIn) (*mcp.CallToolResult, squareOut, error) {
		n := int(r.runs.Add(1))
		if r.in != nil {
			r.in <- struct{}{}
		}
		if r.gate != nil {
			<-r.gate
		}
		if r.fail.Load() {
			return nil, squareOut{}, errors.New("square failed")
		}
		return nil, squareOut{Square: in.N * in.N, Run: n}, nil
	})
	mcp.AddTool(r.srv, &mcp.Tool{Name: "cube"}, func(ctx context.Context, _ *mcp.CallToolRequest, in squareIn) (*mcp.CallToolResult, squareOut, error) {
		n := int(r.runs.Add(1))
		return nil, squareOut{Square: in.N * in.N * in.N, Run: n}, nil
	})
	r.srv.AddReceivingMiddleware(pay)
	o := offer
	o.Network = "eip155:84532"
	r.pr = trustmcp.PaymentRequired{PaymentRequired: x402.PaymentRequired{X402Version: 2, Accepts: []x402.PaymentRequirements{o}}}
	return r
}

// payment signs a new payment for the rig's offer.
func (r *replayRig) payment(t *testing.T) x402.PaymentPayload {
	t.Helper()
	payer, err := evm.NewPayer("0x" + payerKey)
	if err != nil {
		t.Fatal(err)
	}
	proof, err := payer.Pay(context.Background(), r.pr.Accepts[0])
	if err != nil {
		t.Fatal(err)
	}
	return x402.PaymentPayload{X402Version: 2, Accepted: r.pr.Accepts[0], Payload: proof.Payload}
}

// paidCall calls tool with the argument n and the payment p. It returns
// the call's error for the caller to check and never fails t itself, so
// that it may run on any goroutine.
func paidCall(ctx context.Context, t *testing.T, cs *mcp.ClientSession, tool string, n int, p x402.PaymentPayload) (*mcp.CallToolResult, error) {
	t.Helper()
	return cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"n": n}, Meta: mcp.Meta{trustmcp.MetaPayment: p}})
}

// settlementOf reads _meta["x402/payment-response"] of res.
func settlementOf(t *testing.T, res *mcp.CallToolResult) x402.SettleResponse {
	t.Helper()
	var sr x402.SettleResponse
	b, _ := json.Marshal(res.Meta[trustmcp.MetaPaymentResponse])
	if err := json.Unmarshal(b, &sr); err != nil || !sr.Success || sr.Transaction == "" {
		t.Fatalf("_meta[%q] = %s (%v), want a successful settlement", trustmcp.MetaPaymentResponse, b, err)
	}
	return sr
}

// answerOf is what a client sees of a paid result: its structured
// content, text and settlement.
type answerOf struct {
	Structured string
	Text       string
	Settlement x402.SettleResponse
}

func answer(t *testing.T, res *mcp.CallToolResult) answerOf {
	t.Helper()
	if res.IsError {
		t.Fatalf("tool error: %s", text(res))
	}
	b, _ := json.Marshal(res.StructuredContent)
	return answerOf{Structured: string(b), Text: text(res), Settlement: settlementOf(t, res)}
}

// A paid result lost on the way is delivered again to a retry of the
// same call with the same payment: the same content and the first
// settlement, without running the tool or settling again.
func TestPaywall_retryGetsKeptResult(t *testing.T) {
	r := newReplayRig(t, trustmcp.PaywallConfig{})
	cs := connect(t, r.srv)
	ctx := context.Background()
	p := r.payment(t)

	first, err := paidCall(ctx, t, cs, "square", 7, p)
	if err != nil {
		t.Fatal(err)
	}
	want := answer(t, first) // then "lost": the client retries
	if !strings.Contains(want.Structured, `"square":49`) {
		t.Fatalf("first result %s, want the square of 7", want.Structured)
	}
	for i := range 2 {
		again, err := paidCall(ctx, t, cs, "square", 7, p)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(want, answer(t, again)); diff != "" {
			t.Errorf("retry %d: result differs from the first (-first +retry):\n%s", i+1, diff)
		}
	}
	if n := r.runs.Load(); n != 1 {
		t.Errorf("the tool ran %d times, want 1", n)
	}
	if n := r.fac.settled.Load(); n != 1 {
		t.Errorf("the facilitator settled %d times, want 1", n)
	}

	// The same payment for another call: already used, nothing runs.
	for _, c := range []struct {
		tool string
		n    int
	}{{"square", 8}, {"cube", 7}} {
		res, err := paidCall(ctx, t, cs, c.tool, c.n, p)
		if err != nil {
			t.Fatal(err)
		}
		if pr := paidTerms(t, res); !strings.Contains(pr.Error, "already used") {
			t.Errorf("%s(%d) with the payment of square(7): %q, want already used", c.tool, c.n, pr.Error)
		}
	}
	if n, s := r.runs.Load(), r.fac.settled.Load(); n != 1 || s != 1 {
		t.Errorf("after the refused calls: %d runs and %d settlements, want 1 and 1", n, s)
	}
}

// A retry that arrives while the first call still runs waits for it and
// gets its result, even when the first caller went away.
func TestPaywall_retryWhileRunning(t *testing.T) {
	r := newReplayRig(t, trustmcp.PaywallConfig{})
	r.gate, r.in = make(chan struct{}), make(chan struct{}, 1)
	cs := connect(t, r.srv)
	p := r.payment(t)

	ctx1, cancel1 := context.WithCancel(context.Background())
	lost := make(chan error, 1)
	go func() {
		_, err := paidCall(ctx1, t, cs, "square", 9, p)
		lost <- err
	}()
	<-r.in    // the tool runs
	cancel1() // and its caller goes away
	if err := <-lost; err == nil {
		t.Fatal("the cancelled call returned a result")
	}
	retried := make(chan *mcp.CallToolResult, 1)
	go func() {
		res, err := paidCall(context.Background(), t, cs, "square", 9, p)
		if err != nil {
			t.Error(err)
		}
		retried <- res
	}()
	close(r.gate)
	res := <-retried
	if res == nil {
		return
	}
	got := answer(t, res)
	if !strings.Contains(got.Structured, `"square":81`) || !strings.Contains(got.Structured, `"run":1`) {
		t.Errorf("retry: %s, want the first run's square of 9", got.Structured)
	}
	if n, s := r.runs.Load(), r.fac.settled.Load(); n != 1 || s != 1 {
		t.Errorf("%d runs and %d settlements, want 1 and 1", n, s)
	}
}

// Two servers sharing a replay store but not an answer store: a retry
// that reaches the other one is refused, never charged twice.
func TestPaywall_retryOtherProcess(t *testing.T) {
	replay := &x402.MemoryReplay{}
	fac := &countingFacilitator{}
	a := newReplayRig(t, trustmcp.PaywallConfig{Facilitator: fac, Replay: replay})
	b := newReplayRig(t, trustmcp.PaywallConfig{Facilitator: fac, Replay: replay})
	p := a.payment(t)
	ctx := context.Background()
	if _, err := paidCall(ctx, t, connect(t, a.srv), "square", 3, p); err != nil {
		t.Fatal(err)
	}
	res, err := paidCall(ctx, t, connect(t, b.srv), "square", 3, p)
	if err != nil {
		t.Fatal(err)
	}
	if pr := paidTerms(t, res); !strings.Contains(pr.Error, "already used") {
		t.Errorf("retry on the other server: %q, want already used", pr.Error)
	}
	if n := fac.settled.Load(); n != 1 || b.runs.Load() != 0 {
		t.Errorf("settled %d times and ran %d times on the other server, want 1 and 0", n, b.runs.Load())
	}
}

func TestMemoryAnswers(t *testing.T) {
	var s trustmcp.MemoryAnswers
	ctx := context.Background()
	now := time.Now()
	if err := s.Keep(ctx, "k", "0xa11ce", []byte(`{"a":1}`), now.Add(time.Minute)); err != nil {
		t.Fatal(err)
	}
	if b, ok, err := s.Answer(ctx, "k", now); err != nil || !ok || string(b) != `{"a":1}` {
		t.Errorf("Answer = %s %v %v, want the kept answer", b, ok, err)
	}
	if _, ok, _ := s.Answer(ctx, "k", now.Add(time.Minute)); ok {
		t.Error("an expired answer was returned")
	}
	if _, ok, _ := s.Answer(ctx, "other", now); ok {
		t.Error("an answer was returned for a key never kept")
	}
}
