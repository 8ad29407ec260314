package x402

import (
	"context"
	"encoding/json"
	"net/http"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
)

// TestTransport_selectPanicLeavesNoPaymentInProgress: a Select that
// panics while a call's payment is being made panics the request, and
// leaves no payment in progress behind it: the next request of the call
// pays rather than waiting for a payment that will never be made.
func TestTransport_selectPanicLeavesNoPaymentInProgress(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	payer := PayerFunc(func(context.Context, PaymentRequirements) (Proof, error) {
		return Proof{Payload: json.RawMessage(`{}`), Reference: "ref"}, nil
	})
	fs, tr, c, budget := newFlight(t, payer)
	defer fs.Close()
	var selects atomic.Int32
	tr.Select = func(req *http.Request, p *Policy, offers []PaymentRequirements) (PaymentRequirements, error) {
		if selects.Add(1) == 1 {
			panic("choosing an offer")
		}
		return DefaultSelect(req, p, offers)
	}

	func() {
		defer func() {
			if v := recover(); v != "choosing an offer" {
				t.Errorf("first request: recovered %v, want the Select's panic", v)
			}
		}()
		_ = keyedGet(t.Context(), c, fs.URL, "call-1")
	}()
	// The deadline only keeps a request that waits forever from hanging
	// the test; a request that does not wait answers at once.
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	if err := keyedGet(ctx, c, fs.URL, "call-1"); err != nil {
		t.Fatalf("request after the panic: %v", err)
	}
	if got := budget.Spent(); got != 1000 {
		t.Errorf("budget spent %d, want 1000", got)
	}
}
