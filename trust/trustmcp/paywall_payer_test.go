package trustmcp_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	metricnoop "go.opentelemetry.io/otel/metric/noop"
	tracenoop "go.opentelemetry.io/otel/trace/noop"

	"github.com/vouchkit/vouch/trust/trustmcp"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// payerlessFacilitator settles as countingFacilitator does, with the payer
// left out of its verify and settle answers, as some facilitators answer.
type payerlessFacilitator struct{ countingFacilitator }

func (f *payerlessFacilitator) Verify(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.VerifyResponse, error) {
	vr, err := f.countingFacilitator.Verify(ctx, p, r)
	if vr != nil {
		vr.Payer = ""
	}
	return vr, err
}

func (f *payerlessFacilitator) Settle(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.SettleResponse, error) {
	sr, err := f.countingFacilitator.Settle(ctx, p, r)
	if sr != nil {
		sr.Payer = ""
	}
	return sr, err
}

// TestPaywall_payerlessFacilitatorKeepsPayersApart: when the facilitator's
// answers leave the payer out, each payer is still known by the signer of
// its authorization. Results are kept two at most; alice pays for one
// call, then bob for two: bob's second result pushes out his own first,
// not alice's, and her retry gets her result again. Taken for one payer
// "", alice's result was the one forgotten, and her retry was refused as
// already used; so it was with telemetry off.
func TestPaywall_payerlessFacilitatorKeepsPayersApart(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  trustmcp.PaywallConfig
	}{
		{"telemetry on", trustmcp.PaywallConfig{}},
		{"telemetry off", trustmcp.PaywallConfig{TracerProvider: tracenoop.NewTracerProvider(), MeterProvider: metricnoop.NewMeterProvider()}},
	} {
		t.Run(tc.name, func(t *testing.T) { testPayersApart(t, tc.cfg) })
	}
}

func testPayersApart(t *testing.T, cfg trustmcp.PaywallConfig) {
	fac := &payerlessFacilitator{}
	cfg.Facilitator, cfg.Answers = fac, &trustmcp.MemoryAnswers{MaxEntries: 2}
	r := newReplayRig(t, cfg)
	cs := connect(t, r.srv)
	ctx := context.Background()
	alice := r.payment(t)
	bobKey := strings.Repeat("1f", 32)
	bobPayer, err := evm.NewPayer("0x" + bobKey)
	if err != nil {
		t.Fatal(err)
	}
	bobPays := func() x402.PaymentPayload {
		proof, err := bobPayer.Pay(ctx, r.pr.Accepts[0])
		if err != nil {
			t.Fatal(err)
		}
		return x402.PaymentPayload{X402Version: 2, Accepted: r.pr.Accepts[0], Payload: proof.Payload}
	}

	first, err := paidCall(ctx, t, cs, "square", 7, alice)
	if err != nil {
		t.Fatal(err)
	}
	want := answer(t, first)
	from, ok := alice.AuthorizationFrom()
	if !ok || !strings.EqualFold(want.Settlement.Payer, from) {
		t.Errorf("alice's settlement names payer %q, want her authorization's signer %q", want.Settlement.Payer, from)
	}
	for n := range 2 {
		if _, err := paidCall(ctx, t, cs, "square", 8+n, bobPays()); err != nil {
			t.Fatal(err)
		}
	}

	again, err := paidCall(ctx, t, cs, "square", 7, alice)
	if err != nil {
		t.Fatal(err)
	}
	if again.IsError {
		t.Fatalf("alice's retry after bob's two calls: %s; want her result again", text(again))
	}
	if diff := cmp.Diff(want, answer(t, again)); diff != "" {
		t.Errorf("alice's retry: result differs from the first (-first +retry):\n%s", diff)
	}
	if n, s := r.runs.Load(), fac.settled.Load(); n != 3 || s != 3 {
		t.Errorf("%d runs and %d settlements, want 3 and 3", n, s)
	}
}

// respelt returns p with the from of its authorization written in
// another letter case (all lower, or all upper when it was lower), which
// the facilitator reads as the same address.
func respelt(t *testing.T, p x402.PaymentPayload) x402.PaymentPayload {
	t.Helper()
	var payload map[string]any
	if err := json.Unmarshal(p.Payload, &payload); err != nil {
		t.Fatal(err)
	}
	auth, _ := payload["authorization"].(map[string]any)
	from, _ := auth["from"].(string)
	hexDigits, ok := strings.CutPrefix(from, "0x")
	if !ok {
		t.Fatalf("authorization from %q is not 0x and hex digits", from)
	}
	if hexDigits == strings.ToLower(hexDigits) {
		auth["from"] = "0x" + strings.ToUpper(hexDigits)
	} else {
		auth["from"] = "0x" + strings.ToLower(hexDigits)
	}
	b, err := json.Marshal(payload)
	if err != nil {
		t.Fatal(err)
	}
	p.Payload = b
	return p
}

// TestPaywall_payerlessFacilitatorPayerOneSpelling: a payer named by the
// signer of its authorization is one payer however its payment spells
// the address. Results are kept two at most; alice pays for one call,
// then bob for two, the second with his address in another letter case:
// he pushes out his own first result, not alice's, and her retry gets
// her result again. Taken for two payers, bob counted as a payer holding
// nothing, owed room, and alice's result was the one forgotten.
func TestPaywall_payerlessFacilitatorPayerOneSpelling(t *testing.T) {
	fac := &payerlessFacilitator{}
	r := newReplayRig(t, trustmcp.PaywallConfig{Facilitator: fac, Answers: &trustmcp.MemoryAnswers{MaxEntries: 2}})
	cs := connect(t, r.srv)
	ctx := context.Background()
	alice := r.payment(t)
	bobPayer, err := evm.NewPayer("0x" + strings.Repeat("1f", 32))
	if err != nil {
		t.Fatal(err)
	}
	bobPays := func() x402.PaymentPayload {
		proof, err := bobPayer.Pay(ctx, r.pr.Accepts[0])
		if err != nil {
			t.Fatal(err)
		}
		return x402.PaymentPayload{X402Version: 2, Accepted: r.pr.Accepts[0], Payload: proof.Payload}
	}

	first, err := paidCall(ctx, t, cs, "square", 7, alice)
	if err != nil {
		t.Fatal(err)
	}
	want := answer(t, first)
	for n, p := range []x402.PaymentPayload{bobPays(), respelt(t, bobPays())} {
		res, err := paidCall(ctx, t, cs, "square", 8+n, p)
		if err != nil {
			t.Fatal(err)
		}
		answer(t, res)
	}
	again, err := paidCall(ctx, t, cs, "square", 7, alice)
	if err != nil {
		t.Fatal(err)
	}
	if again.IsError {
		t.Fatalf("alice's retry after bob's two calls: %s; want her result again", text(again))
	}
	if diff := cmp.Diff(want, answer(t, again)); diff != "" {
		t.Errorf("alice's retry: result differs from the first (-first +retry):\n%s", diff)
	}
	if n, s := r.runs.Load(), fac.settled.Load(); n != 3 || s != 3 {
		t.Errorf("%d runs and %d settlements, want 3 and 3", n, s)
	}
}
