package trustmcp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/trustmcp"
	"github.com/vouchkit/vouch/trust/trustpay"
)

// checksSquare judges a claimed {"square":s} VALID when s is the square
// of the input's n.
func checksSquare(_ context.Context, job *router.Job) (*router.Result, error) {
	var in struct{ N int }
	var claim struct{ Square int }
	json.Unmarshal(job.TaskInput.Raw(), &in)
	json.Unmarshal(job.Claim.Output, &claim)
	if claim.Square != in.N*in.N {
		return &router.Result{Verdict: router.VerdictInvalid, Confidence: 0.9, Reasons: []string{"not the square"}}, nil
	}
	return &router.Result{Verdict: router.VerdictValid, Confidence: 0.9}, nil
}

func squareGate(t *testing.T) trustmcp.ToolGate {
	t.Helper()
	w := router.WorkerFunc(checksSquare)
	engine, err := router.NewEngine([]router.Session{{ID: 1, Worker: w}, {ID: 2, Worker: w}, {ID: 3, Worker: w}})
	if err != nil {
		t.Fatal(err)
	}
	svc, err := trust.New(engine)
	if err != nil {
		t.Fatal(err)
	}
	return trustmcp.ValidateResult(trustpay.Route{Caller: svc, Policy: trust.PolicySafe, Spec: trust.JSON("the square of n")})
}

// A gated tool's result is delivered and settled only when its validation
// passes; a refused one is never settled, and a retry with the same
// payment gets the kept refusal without the tool or the validation
// running again.
func TestPaywall_gateSettlesOnlyValidResults(t *testing.T) {
	gate := squareGate(t)
	var checks int
	counted := func(ctx context.Context, call *mcp.CallToolRequest, res *mcp.CallToolResult) *mcp.CallToolResult {
		checks++
		return gate(ctx, call, res)
	}
	// "cube" is judged as a square: its results are wrong.
	r := newReplayRig(t, trustmcp.PaywallConfig{Gates: map[string]trustmcp.ToolGate{"square": counted, "cube": counted}})
	cs := connect(t, r.srv)
	ctx := context.Background()

	good, err := paidCall(ctx, t, cs, "square", 7, r.payment(t))
	if err != nil {
		t.Fatal(err)
	}
	if a := answer(t, good); !strings.Contains(a.Structured, `"square":49`) {
		t.Errorf("square(7) = %s", a.Structured)
	}

	p := r.payment(t)
	for i := range 2 {
		bad, err := paidCall(ctx, t, cs, "cube", 7, p)
		if err != nil {
			t.Fatal(err)
		}
		if !bad.IsError || bad.Meta[trustmcp.MetaPaymentResponse] != nil || !strings.Contains(text(bad), "not delivered") {
			t.Fatalf("call %d: cube(7) = error %v, text %q, meta %v; want a refusal without settlement", i, bad.IsError, text(bad), bad.Meta)
		}
		var v trustmcp.Verdict
		b, _ := json.Marshal(bad.StructuredContent)
		if err := json.Unmarshal(b, &v); err != nil || v.Status != "INVALID" || v.Settled || v.Evidence == nil || v.Evidence.Launched != 3 {
			t.Errorf("call %d: verdict %s", i, b)
		}
	}
	if n, s := r.runs.Load(), r.fac.settled.Load(); n != 2 || s != 1 {
		t.Errorf("%d runs and %d settlements, want 2 runs (square, cube once) and 1 settlement (square)", n, s)
	}
	if checks != 2 {
		t.Errorf("%d checks, want 2 (the retry answered from the kept refusal)", checks)
	}
}
