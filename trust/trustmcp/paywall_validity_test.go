package trustmcp_test

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vouchkit/vouch/trust/trustmcp"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// paidValidateClaim returns a client session of f's server behind a
// Paywall of cfg that prices validate_claim at offer, and a payer.
func paidValidateClaim(t *testing.T, f *fixture, cfg trustmcp.PaywallConfig, offer x402.PaymentRequirements) (*mcp.ClientSession, *evm.Payer) {
	t.Helper()
	cfg.Prices = map[string]x402.Price{"validate_claim": {Accepts: []x402.PaymentRequirements{offer}}}
	pay, err := trustmcp.Paywall(cfg)
	if err != nil {
		t.Fatal(err)
	}
	s, err := trustmcp.NewServer(f.cfg)
	if err != nil {
		t.Fatal(err)
	}
	s.AddReceivingMiddleware(pay)
	payer, err := evm.NewPayer("0x" + payerKey)
	if err != nil {
		t.Fatal(err)
	}
	return connect(t, s), payer
}

// An EIP-3009 authorization is valid only before its validBefore: one
// whose validBefore is the very second the tool's time budget and
// settlement end could be settled too late, after the tool ran. It is
// refused before the tool runs.
func TestPaywall_validBeforeAtTheEndOfTheWorkIsTooShort(t *testing.T) {
	f := newFixture(t)
	offer, err := evm.USDC("eip155:84532", "0x000000000000000000000000000000000000dEaD", "$0.005")
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now().Truncate(time.Second).Add(time.Second) // on the second
	fac := &countingFacilitator{}
	cs, payer := paidValidateClaim(t, f, trustmcp.PaywallConfig{Facilitator: fac, Now: func() time.Time { return start }}, offer)
	end := start.Add(x402.DefaultTimeBudget + x402.DefaultSettleTimeout)
	payer.Now = func() time.Time { return end.Add(-time.Duration(offer.MaxTimeoutSeconds) * time.Second) }
	proof, err := payer.Pay(t.Context(), offer)
	if err != nil {
		t.Fatal(err)
	}
	p := x402.PaymentPayload{X402Version: 2, Accepted: offer, Payload: proof.Payload}
	if vb, _ := p.AuthorizationValidBefore(); !vb.Equal(end) {
		t.Fatalf("validBefore %s, want %s", vb, end)
	}
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "validate_claim",
		Arguments: map[string]any{"claimed_result": "17 * 3 = 51"}, Meta: mcp.Meta{trustmcp.MetaPayment: p}})
	if err != nil {
		t.Fatal(err)
	}
	if pr := paidTerms(t, res); !strings.HasPrefix(pr.Error, "authorization_validity_too_short") {
		t.Errorf("terms %q, want authorization_validity_too_short", pr.Error)
	}
	if n := fac.settled.Load(); n != 0 {
		t.Errorf("settled %d times, want 0", n)
	}
}

// slowVerify is the offline facilitator whose Verify moves the clock
// ahead on by took, as a facilitator that slow would.
type slowVerify struct {
	*countingFacilitator
	ahead *atomic.Int64
	took  time.Duration
}

func (f slowVerify) Verify(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.VerifyResponse, error) {
	f.ahead.Add(int64(f.took))
	return f.countingFacilitator.Verify(ctx, p, r)
}

// An authorization that arrives valid 5 s beyond the tool's time budget
// and settlement is refused once its verification has taken 10 s, before
// the tool runs: the work and its settlement could end after it expires.
// Verified at once, the same authorization runs the tool and settles.
func TestPaywall_verificationTakesTheValidity(t *testing.T) {
	offer, err := evm.USDC("eip155:84532", "0x000000000000000000000000000000000000dEaD", "$0.005")
	if err != nil {
		t.Fatal(err)
	}
	for _, took := range []time.Duration{0, 10 * time.Second} {
		f := newFixture(t)
		start := time.Now().Truncate(time.Second).Add(time.Second)
		var ahead atomic.Int64
		now := func() time.Time { return start.Add(time.Duration(ahead.Load())) }
		fac := slowVerify{countingFacilitator: &countingFacilitator{Facilitator: evm.Facilitator{Now: now}}, ahead: &ahead, took: took}
		cs, payer := paidValidateClaim(t, f, trustmcp.PaywallConfig{Facilitator: fac, Now: now}, offer)
		validBefore := start.Add(x402.DefaultTimeBudget + x402.DefaultSettleTimeout + 5*time.Second)
		payer.Now = func() time.Time { return validBefore.Add(-time.Duration(offer.MaxTimeoutSeconds) * time.Second) }
		proof, err := payer.Pay(t.Context(), offer)
		if err != nil {
			t.Fatal(err)
		}
		res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "validate_claim",
			Arguments: map[string]any{"claimed_result": "17 * 3 = 51"},
			Meta:      mcp.Meta{trustmcp.MetaPayment: x402.PaymentPayload{X402Version: 2, Accepted: offer, Payload: proof.Payload}}})
		if err != nil {
			t.Fatal(err)
		}
		switch {
		case took == 0 && (res.IsError || fac.settled.Load() != 1):
			t.Errorf("verified at once: error result %v (%s), settled %d times; want the tool's answer, settled once", res.IsError, text(res), fac.settled.Load())
		case took > 0:
			if pr := paidTerms(t, res); !strings.HasPrefix(pr.Error, "authorization_validity_too_short") {
				t.Errorf("verified in %s: terms %q, want authorization_validity_too_short", took, pr.Error)
			}
			if n := fac.settled.Load(); n != 0 {
				t.Errorf("verified in %s: settled %d times, want 0", took, n)
			}
		}
	}
}
