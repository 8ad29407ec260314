package x402_test

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// refusedCapture is an escrow that refuses every capture for good.
type refusedCapture struct{ *evm.Escrow }

func (f refusedCapture) Settle(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.SettleResponse, error) {
	if strings.Contains(string(p.Payload), `"type":"capture"`) {
		return &x402.SettleResponse{ErrorReason: "invalid_auth_capture_evm_authorization_expired", Network: r.Network}, nil
	}
	return f.Escrow.Settle(ctx, p, r)
}

// The usage a handler reported is in the payment response of its capture
// only when the capture succeeded: a capture refused, or not answered (it
// may still happen), reports no usage, as it charged nothing, and the
// retry that completes the pending capture reports it. Before, a failed
// capture's response carried the usage, read by UsageFromSettlement as a
// charge that did not happen.
func TestMiddleware_escrowUsageOnlyOnACapture(t *testing.T) {
	noLeak(t)
	used := x402.Usage{Amount: 20_000, Units: 2, Unit: "run", MaxAmount: 50_000}
	for _, tc := range []struct {
		name  string
		fac   func(*evm.Escrow) x402.Facilitator
		retry bool // the retry captures
	}{
		{"refused", func(e *evm.Escrow) x402.Facilitator { return refusedCapture{e} }, false},
		{"unanswered", func(e *evm.Escrow) x402.Facilitator { return &unansweredCapture{Escrow: e} }, true},
	} {
		s := newEscrowServer(t, openBalance, nil, func(w http.ResponseWriter, r *http.Request) {
			if err := x402.ReportUsage(r.Context(), x402.Usage{Amount: 20_000, Units: 2, Unit: "run"}); err != nil {
				t.Error(err)
			}
			w.Write([]byte("Paris"))
		})
		s.facilitate(t, tc.fac(s.escrow))
		proof := s.proof(t)
		type answer struct {
			Status  int
			Success bool
			Usage   *x402.Usage
		}
		var got []answer
		for range 2 {
			resp, _ := s.paid(t, proof)
			sr, _ := escrowOf(t, resp)
			a := answer{Status: resp.StatusCode, Success: sr.Success}
			if u, ok := x402.UsageFromSettlement(sr); ok {
				a.Usage = &u
			}
			got = append(got, a)
		}
		want := []answer{{Status: http.StatusPaymentRequired}, {Status: http.StatusPaymentRequired}}
		if tc.retry {
			want[1] = answer{http.StatusOK, true, &used}
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Errorf("%s capture: the use and its retry (-want +got):\n%s", tc.name, diff)
		}
	}
}
