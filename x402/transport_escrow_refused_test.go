package x402_test

import (
	"errors"
	"net/http"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// A capture the facilitator refused for good will not happen: the
// recovery voids the hold, and no retry gets the answer. The Transport
// reports the payment rejected (ErrPaymentRejected, permanent), and the
// same proof sent again gets the same refusal. Before, the payment
// response's hold, still standing until the void, was read as a capture
// to come: the Transport reported ErrPaymentPending, not permanent,
// telling the caller to send the call again for an answer that no retry
// could get.
func TestTransport_escrowCaptureRefusedIsRejected(t *testing.T) {
	noLeak(t)
	s := newEscrowServer(t, openBalance, nil, func(w http.ResponseWriter, r *http.Request) { w.Write([]byte("Paris")) })
	s.facilitate(t, refusedCapture{s.escrow})
	o := newObservedPayer(t, s.payer)
	transport := o.tr
	transport.Base, transport.Policy = s.Client().Transport, x402.Policy{Schemes: []string{x402.SchemeAuthCapture}}
	client := &http.Client{Transport: transport}
	type use struct {
		Rejected, Pending, Permanent bool
		Reason                       string
	}
	var got []use
	for range 2 {
		resp, err := client.Do(escrowCall(t, s.URL, "call-refused"))
		if err == nil {
			resp.Body.Close()
			t.Fatalf("status %d, want an error (the capture was refused)", resp.StatusCode)
		}
		var pe *x402.PaymentError
		errors.As(err, &pe)
		got = append(got, use{errors.Is(err, x402.ErrPaymentRejected), errors.Is(err, x402.ErrPaymentPending), x402.Permanent(err), pe.Reason})
	}
	want := use{true, false, true, evm.ReasonAuthCaptureExpired}
	if diff := cmp.Diff([]use{want, want}, got); diff != "" {
		t.Errorf("the call and its retry with the same proof (-want +got):\n%s", diff)
	}
	if payer, _ := s.balances(); payer != openBalance-50_000 && payer != openBalance {
		t.Errorf("the payer holds %d", payer)
	}
	if n := s.payer.n.Load(); n != 1 {
		t.Errorf("%d payments made, want one", n)
	}
}
