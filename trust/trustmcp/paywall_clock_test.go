package trustmcp_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/vouchkit/vouch/trust/trustmcp"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// The results a MemoryAnswers keeps expire by the Paywall's clock, the
// one its Answer is given, whether the clock runs ahead of the wall clock
// or behind it, and whether the store is the Paywall's own or given.
func TestPaywall_answersKeptByPaywallClock(t *testing.T) {
	for _, tc := range []struct {
		name    string
		skew    time.Duration
		answers trustmcp.AnswerStore
	}{
		{"ahead, own store", 2 * time.Hour, nil},
		{"behind, own store", -2 * time.Hour, nil},
		{"ahead, given store", 2 * time.Hour, &trustmcp.MemoryAnswers{}},
		{"behind, given store", -2 * time.Hour, &trustmcp.MemoryAnswers{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Now().Add(tc.skew)
			clock := func() time.Time { return now }
			fac := &countingFacilitator{Facilitator: evm.Facilitator{Now: clock}}
			r := newReplayRig(t, trustmcp.PaywallConfig{Facilitator: fac, Answers: tc.answers, Now: clock})
			cs := connect(t, r.srv)
			payer, err := evm.NewPayer("0x" + payerKey)
			if err != nil {
				t.Fatal(err)
			}
			payer.Now = clock
			pay := func() x402.PaymentPayload {
				proof, err := payer.Pay(context.Background(), r.pr.Accepts[0])
				if err != nil {
					t.Fatal(err)
				}
				return x402.PaymentPayload{X402Version: 2, Accepted: r.pr.Accepts[0], Payload: proof.Payload}
			}
			first, second := pay(), pay()
			// Two payments, then the retry of the first: its result is
			// neither capped to the wall clock nor dropped as expired by
			// it when the second is kept.
			for i, p := range []x402.PaymentPayload{first, second, first} {
				res, err := paidCall(context.Background(), t, cs, "square", 7, p)
				if err != nil {
					t.Fatal(err)
				}
				if res.IsError || !strings.Contains(answer(t, res).Structured, `"square":49`) {
					t.Fatalf("call %d: %s, want the square of 7", i, text(res))
				}
			}
			if n := r.runs.Load(); n != 2 {
				t.Errorf("the tool ran %d times, want 2", n)
			}
		})
	}
}
