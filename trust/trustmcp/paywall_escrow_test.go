package trustmcp_test

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vouchkit/vouch/trust/trustmcp"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/x402test"
)

// settleCounter counts what a facilitator is asked to settle.
type settleCounter struct {
	x402.Facilitator
	settled atomic.Int32
	// dropCapture, when set, has the next capture go unanswered: it is
	// cleared, and the capture is an error, as from a facilitator that
	// timed out.
	dropCapture atomic.Bool
}

func (f *settleCounter) Settle(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.SettleResponse, error) {
	f.settled.Add(1)
	if strings.Contains(string(p.Payload), `"type":"capture"`) && f.dropCapture.CompareAndSwap(true, false) {
		return nil, errors.New("facilitator timed out")
	}
	return f.Facilitator.Settle(ctx, p, r)
}

// escrowRig serves, over Streamable HTTP on loopback, tools priced with
// the "auth-capture" offer of an x402test.EscrowBed: "square", gated by
// a check that names the verdict VALID when the square is right and
// refuses it as INVALID otherwise (the tool squares wrongly for n = 4),
// and "fail", which answers a tool error.
type escrowRig struct {
	bed    *x402test.EscrowBed
	fac    *settleCounter
	ledger *x402.MemoryEscrowLedger
	cs     *mcp.ClientSession
	runs   atomic.Int32
}

func newEscrowRig(t *testing.T) *escrowRig {
	t.Helper()
	return newEscrowRigWith(t, nil)
}

// newEscrowRigWith is newEscrowRig whose Paywall's configuration
// configure changes (nil changes nothing).
func newEscrowRigWith(t *testing.T, configure func(*trustmcp.PaywallConfig)) *escrowRig {
	t.Helper()
	return newEscrowRigOn(t, x402test.NewEscrowBed(t), configure)
}

// newEscrowRigOn is newEscrowRigWith on bed, which another rig may share:
// two servers of one seller.
func newEscrowRigOn(t *testing.T, bed *x402test.EscrowBed, configure func(*trustmcp.PaywallConfig)) *escrowRig {
	t.Helper()
	r := &escrowRig{bed: bed, ledger: &x402.MemoryEscrowLedger{}}
	r.fac = &settleCounter{Facilitator: r.bed.Facilitator}
	price := x402.Price{Accepts: []x402.PaymentRequirements{r.bed.Offer}}
	gate := func(ctx context.Context, call *mcp.CallToolRequest, res *mcp.CallToolResult) *mcp.CallToolResult {
		var in squareIn
		var out squareOut
		b, _ := json.Marshal(res.StructuredContent)
		if json.Unmarshal(call.Params.Arguments, &in) != nil || json.Unmarshal(b, &out) != nil || out.Square != in.N*in.N {
			return &mcp.CallToolResult{StructuredContent: trustmcp.Verdict{Status: "INVALID"}, Content: []mcp.Content{&mcp.TextContent{Text: "wrong square"}}}
		}
		if err := x402.ReportVerdict(ctx, "VALID"); err != nil {
			t.Errorf("ReportVerdict in the gate: %v", err)
		}
		return nil
	}
	cfg := trustmcp.PaywallConfig{Facilitator: r.fac,
		Prices: map[string]x402.Price{"square": price, "fail": price},
		Gates:  map[string]trustmcp.ToolGate{"square": gate},
		Escrow: &x402.EscrowConfig{Authorizer: r.bed.Authorizer, Ledger: r.ledger}}
	if configure != nil {
		configure(&cfg)
	}
	pay, err := trustmcp.Paywall(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "escrow", Version: "v0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "square"}, func(_ context.Context, _ *mcp.CallToolRequest, in squareIn) (*mcp.CallToolResult, squareOut, error) {
		run := int(r.runs.Add(1))
		if in.N == 4 {
			return nil, squareOut{Square: 15, Run: run}, nil
		}
		return nil, squareOut{Square: in.N * in.N, Run: run}, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "fail"}, func(context.Context, *mcp.CallToolRequest, squareIn) (*mcp.CallToolResult, squareOut, error) {
		r.runs.Add(1)
		return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: "no"}}}, squareOut{}, nil
	})
	s.AddReceivingMiddleware(pay)
	srv := statelessHTTP(t, s)
	hc := &http.Client{Transport: &http.Transport{}}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "v0"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: srv.URL, HTTPClient: hc, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cs.Close()
		hc.CloseIdleConnections()
	})
	r.cs = cs
	return r
}

// pay reads the terms of tool from an unpaid call and signs the
// "auth-capture" offer they carry, as a client does.
func (r *escrowRig) pay(t *testing.T, tool string) x402.PaymentPayload {
	t.Helper()
	res, err := r.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: map[string]any{"n": 3}})
	if err != nil {
		t.Fatal(err)
	}
	pr := paidTerms(t, res)
	offer := pr.Accepts[0]
	if _, ok := offer.Extra["captureDeadline"]; !ok {
		t.Fatalf("the terms' offer %+v has no captureDeadline", offer.Extra)
	}
	pp, _ := signedPayment(t, offer)
	return pp
}

// reportOf reads the settlement and the escrow report of res.
func reportOf(t *testing.T, res *mcp.CallToolResult) (x402.SettleResponse, x402.EscrowReport) {
	t.Helper()
	var sr x402.SettleResponse
	b, _ := json.Marshal(res.Meta[trustmcp.MetaPaymentResponse])
	if err := json.Unmarshal(b, &sr); err != nil {
		t.Fatalf("_meta[%q] = %s: %v", trustmcp.MetaPaymentResponse, b, err)
	}
	e, ok := x402.EscrowFromSettlement(&sr)
	if !ok {
		t.Fatalf("_meta[%q] = %s carries no escrow report", trustmcp.MetaPaymentResponse, b)
	}
	return sr, e
}

// A result the gate finds VALID is captured: the hold moves from the
// payer to the receiver, and the result carries the capture and the
// report; a retry with the same payment gets the same result and
// settlement, without running the tool or settling again.
func TestPaywall_escrowCapturesAValidResult(t *testing.T) {
	r := newEscrowRig(t)
	open := r.bed.Balances()
	p := r.pay(t, "square")
	res, err := paidCall(context.Background(), t, r.cs, "square", 3, p)
	if err != nil {
		t.Fatal(err)
	}
	var out squareOut
	decode(t, res, &out)
	if out.Square != 9 {
		t.Errorf("result %+v, want the square of 3", out)
	}
	sr, e := reportOf(t, res)
	if !sr.Success || e.State != x402.EscrowCaptured || e.Verdict != "VALID" || e.Captured != e.Held || e.Held != "50000" {
		t.Errorf("settlement %+v with report %+v, want a capture of the hold of 50000 with verdict VALID", sr, e)
	}
	if got, want := r.bed.Balances(), open.Plus(-x402test.EscrowHoldAmount, 0, x402test.EscrowHoldAmount); got != want {
		t.Errorf("balances %+v, want %+v", got, want)
	}
	settles := r.fac.settled.Load() // the hold and the capture
	if settles != 2 {
		t.Errorf("%d settlements, want 2 (the hold and the capture)", settles)
	}

	again, err := paidCall(context.Background(), t, r.cs, "square", 3, p)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(answer(t, res), answer(t, again)); diff != "" {
		t.Errorf("the retry's answer (-first +retry):\n%s", diff)
	}
	if n := r.fac.settled.Load(); n != settles || r.runs.Load() != 1 {
		t.Errorf("after the retry: %d settlements and %d runs, want %d and 1", n, r.runs.Load(), settles)
	}
	if got, want := r.bed.Balances(), open.Plus(-x402test.EscrowHoldAmount, 0, x402test.EscrowHoldAmount); got != want {
		t.Errorf("balances after the retry %+v, want %+v", got, want)
	}
}

// A result the gate finds INVALID is voided: the payer's balance is back
// where it started, the refusal carries the void and the report, and a
// retry gets the same refusal without a second void.
func TestPaywall_escrowVoidsAnInvalidResult(t *testing.T) {
	r := newEscrowRig(t)
	open := r.bed.Balances()
	p := r.pay(t, "square")
	res, err := paidCall(context.Background(), t, r.cs, "square", 4, p)
	if err != nil {
		t.Fatal(err)
	}
	if !res.IsError || !strings.Contains(text(res), "wrong square") {
		t.Errorf("result %q (isError %v), want the gate's refusal", text(res), res.IsError)
	}
	sr, e := reportOf(t, res)
	if !sr.Success || e.State != x402.EscrowVoided || e.Verdict != "INVALID" || e.Captured != "0" {
		t.Errorf("settlement %+v with report %+v, want a void with verdict INVALID", sr, e)
	}
	if got := r.bed.Balances(); got != open {
		t.Errorf("balances %+v, want those before the hold %+v", got, open)
	}
	settles := r.fac.settled.Load()
	again, err := paidCall(context.Background(), t, r.cs, "square", 4, p)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(wire(t, res), wire(t, again)); diff != "" {
		t.Errorf("the retry's refusal (-first +retry):\n%s", diff)
	}
	if n := r.fac.settled.Load(); n != settles || r.runs.Load() != 1 {
		t.Errorf("after the retry: %d settlements and %d runs, want %d and 1", n, r.runs.Load(), settles)
	}
}

// A tool error voids the hold, and the error carries the void.
func TestPaywall_escrowVoidsAToolError(t *testing.T) {
	r := newEscrowRig(t)
	open := r.bed.Balances()
	res, err := paidCall(context.Background(), t, r.cs, "fail", 3, r.pay(t, "fail"))
	if err != nil {
		t.Fatal(err)
	}
	_, e := reportOf(t, res)
	if !res.IsError || text(res) != "no" || e.State != x402.EscrowVoided || e.Verdict != "failed" {
		t.Errorf("result %q (isError %v) with report %+v, want the tool error with a void for verdict failed", text(res), res.IsError, e)
	}
	if got := r.bed.Balances(); got != open {
		t.Errorf("balances %+v, want those before the hold %+v", got, open)
	}
}

// The tool runs only on a hold placed and recorded: a payment whose hold
// the escrow refuses (here, signed for deadlines the terms did not set)
// is answered with the terms, and the tool does not run.
func TestPaywall_escrowRefusesDeadlinesNotOffered(t *testing.T) {
	r := newEscrowRig(t)
	p := r.pay(t, "square")
	p.Accepted.Extra["captureDeadline"] = p.Accepted.Extra["captureDeadline"].(float64) + 3600
	res, err := paidCall(context.Background(), t, r.cs, "square", 3, p)
	if err != nil {
		t.Fatal(err)
	}
	if pr := paidTerms(t, res); !strings.HasPrefix(pr.Error, "invalid_auth_capture_deadline") {
		t.Errorf("reason %q, want invalid_auth_capture_deadline", pr.Error)
	}
	if r.runs.Load() != 0 || r.fac.settled.Load() != 0 {
		t.Errorf("%d runs and %d settlements, want none", r.runs.Load(), r.fac.settled.Load())
	}
}

// A price with an "auth-capture" offer needs PaywallConfig.Escrow: its
// hold would be placed and never captured nor voided.
func TestPaywall_configAuthCaptureNeedsEscrow(t *testing.T) {
	bed := x402test.NewEscrowBed(t)
	prices := map[string]x402.Price{"arbitrate": {Accepts: []x402.PaymentRequirements{bed.Offer}}}
	_, err := trustmcp.Paywall(trustmcp.PaywallConfig{Facilitator: bed.Facilitator, Prices: prices})
	if err == nil || !strings.Contains(err.Error(), `"arbitrate"`) || !strings.Contains(err.Error(), "PaywallConfig.Escrow") {
		t.Errorf("Paywall without Escrow = %v, want an error naming the tool and PaywallConfig.Escrow", err)
	}
	before := prices["arbitrate"]
	before.SettleBefore = true
	_, err = trustmcp.Paywall(trustmcp.PaywallConfig{Facilitator: bed.Facilitator, Prices: map[string]x402.Price{"arbitrate": before},
		Escrow: &x402.EscrowConfig{Authorizer: bed.Authorizer}})
	if err == nil || !strings.Contains(err.Error(), "SettleBefore") {
		t.Errorf("Paywall with SettleBefore = %v, want an error naming SettleBefore", err)
	}
}

// wire is res as the client received it, as JSON.
func wire(t *testing.T, res *mcp.CallToolResult) string {
	t.Helper()
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}
