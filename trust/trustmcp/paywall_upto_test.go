package trustmcp_test

import (
	"context"
	"errors"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vouchkit/vouch/trust/trustmcp"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// uptoRig serves two tools priced with an "upto" offer of at most $0.005
// (5000 atomic units) over Streamable HTTP on loopback, settled by the
// offline facilitator: "metered" reports that it used one unit (1 atomic
// unit) with x402.ReportUsage, "unmetered" reports nothing.
type uptoRig struct {
	fac   *evm.Facilitator
	offer x402.PaymentRequirements
	cs    *mcp.ClientSession
	// reports receives what each ReportUsage inside "metered" returned:
	// a report above the maximum, then the report of one unit.
	reports chan [2]error
	// late receives the context of "metered", for a report after it
	// returned; failed the context of "failing", a tool that reports
	// one unit and then fails.
	late, failed chan context.Context
}

func newUptoRig(t *testing.T) *uptoRig {
	t.Helper()
	offer, err := evm.UptoUSDC("eip155:84532", "0x000000000000000000000000000000000000dEaD", "$0.005", evm.OfflineFacilitatorAddress)
	if err != nil {
		t.Fatal(err)
	}
	r := &uptoRig{fac: &evm.Facilitator{}, offer: offer, reports: make(chan [2]error, 1),
		late: make(chan context.Context, 1), failed: make(chan context.Context, 1)}
	pay, err := trustmcp.Paywall(trustmcp.PaywallConfig{Facilitator: r.fac, Prices: map[string]x402.Price{
		"metered":   {Accepts: []x402.PaymentRequirements{offer}},
		"unmetered": {Accepts: []x402.PaymentRequirements{offer}},
		"failing":   {Accepts: []x402.PaymentRequirements{offer}},
	}})
	if err != nil {
		t.Fatal(err)
	}
	s := mcp.NewServer(&mcp.Implementation{Name: "metered", Version: "v0"}, nil)
	mcp.AddTool(s, &mcp.Tool{Name: "metered"}, func(ctx context.Context, _ *mcp.CallToolRequest, in squareIn) (*mcp.CallToolResult, squareOut, error) {
		above := x402.ReportUsage(ctx, x402.Usage{Amount: 5001})
		used := x402.ReportUsage(ctx, x402.Usage{Amount: 1, Units: 1, Unit: "run"})
		r.reports <- [2]error{above, used}
		r.late <- ctx
		return nil, squareOut{Square: in.N * in.N}, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "unmetered"}, func(ctx context.Context, _ *mcp.CallToolRequest, in squareIn) (*mcp.CallToolResult, squareOut, error) {
		return nil, squareOut{Square: in.N * in.N}, nil
	})
	mcp.AddTool(s, &mcp.Tool{Name: "failing"}, func(ctx context.Context, _ *mcp.CallToolRequest, in squareIn) (*mcp.CallToolResult, squareOut, error) {
		if err := x402.ReportUsage(ctx, x402.Usage{Amount: 1}); err != nil {
			t.Errorf("ReportUsage in the failing tool = %v", err)
		}
		r.failed <- ctx
		return nil, squareOut{}, errors.New("the tool failed")
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

// call calls tool with a new payment signed for the rig's offer.
func (r *uptoRig) call(t *testing.T, tool string) *mcp.CallToolResult {
	t.Helper()
	payer, err := evm.NewPayer("0x" + payerKey)
	if err != nil {
		t.Fatal(err)
	}
	proof, err := payer.Pay(context.Background(), r.offer)
	if err != nil {
		t.Fatal(err)
	}
	p := x402.PaymentPayload{X402Version: 2, Accepted: r.offer, Payload: proof.Payload}
	res, err := paidCall(context.Background(), t, r.cs, tool, 3, p)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// An "upto" tool settles what it reported using with x402.ReportUsage,
// as an HTTP handler behind x402.Middleware does: one unit used of 5000
// authorized settles 1, and the settlement in _meta reports the usage.
func TestPaywall_uptoSettlesTheUsageReported(t *testing.T) {
	r := newUptoRig(t)
	res := r.call(t, "metered")
	sr := settlementOf(t, res)
	if reports := <-r.reports; !errors.Is(reports[0], x402.ErrUsageAboveMaximum) || reports[1] != nil {
		t.Errorf("ReportUsage in the tool: above the maximum %v, of one unit %v; want ErrUsageAboveMaximum, then nil", reports[0], reports[1])
	}
	if err := x402.ReportUsage(<-r.late, x402.Usage{Amount: 2}); !errors.Is(err, x402.ErrUsageClosed) {
		t.Errorf("ReportUsage after the tool returned = %v, want ErrUsageClosed", err)
	}
	if sr.Amount != "1" {
		t.Errorf("settled %q, want 1", sr.Amount)
	}
	u, ok := x402.UsageFromSettlement(&sr)
	if want := (x402.Usage{Amount: 1, Units: 1, Unit: "run", MaxAmount: 5000}); !ok || u != want {
		t.Errorf("usage in _meta[%q] = %+v, %v; want %+v", trustmcp.MetaPaymentResponse, u, ok, want)
	}
	var got []string
	for _, s := range r.fac.Settlements() {
		got = append(got, s.Amount)
	}
	if diff := cmp.Diff([]string{"1"}, got); diff != "" {
		t.Errorf("facilitator settlements (-want +got):\n%s", diff)
	}
	var out squareOut
	decode(t, res, &out)
	if out.Square != 9 {
		t.Errorf("result %+v, want the square of 3", out)
	}
}

// An "upto" tool that reports no usage settles the whole authorized
// maximum, as x402.Middleware settles an HTTP handler that reports none
// (and as the official x402 servers do); the settlement then reports no
// usage.
func TestPaywall_uptoUnreportedSettlesTheMaximum(t *testing.T) {
	r := newUptoRig(t)
	sr := settlementOf(t, r.call(t, "unmetered"))
	if sr.Amount != "5000" {
		t.Errorf("settled %q, want the maximum, 5000", sr.Amount)
	}
	if u, ok := x402.UsageFromSettlement(&sr); ok {
		t.Errorf("usage %+v reported, want none", u)
	}
	if s := r.fac.Settlements(); len(s) != 1 || s[0].Amount != "5000" {
		t.Errorf("facilitator settlements %+v, want one of 5000", s)
	}
}

// A tool that fails settles nothing, and the usage it reports after it
// returned is refused, as after a result that settled.
func TestPaywall_uptoReportAfterAFailedToolIsClosed(t *testing.T) {
	r := newUptoRig(t)
	if res := r.call(t, "failing"); !res.IsError {
		t.Fatalf("result %+v, want a tool error", res)
	}
	if err := x402.ReportUsage(<-r.failed, x402.Usage{Amount: 2}); !errors.Is(err, x402.ErrUsageClosed) {
		t.Errorf("ReportUsage after the tool returned = %v, want ErrUsageClosed", err)
	}
	if s := r.fac.Settlements(); len(s) != 0 {
		t.Errorf("facilitator settlements %+v, want none", s)
	}
}
