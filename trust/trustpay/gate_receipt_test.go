package trustpay_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/trustpay"
)

// TestGate_receiptTermsWithoutMode: a route's receipt block without a
// mode holds the terms of the receipt a buyer asks for with the
// Vouch-Receipt header. A buyer who asks for none is served without a
// receipt, never refused because the terms were sent without a mode.
func TestGate_receiptTermsWithoutMode(t *testing.T) {
	terms := receipt.Request{Include: receipt.Include{ConsensusSnapshot: true, RouterTraceRefs: true}, Visibility: receipt.VisibilityShared,
		Counterparties: []string{"buyer"}}
	for _, asks := range []bool{false, true} {
		s := newSellerReceipt(t, 0, terms)
		a := s.buy(t, "Refunds within 30 days, at most 2 a year.", asks)[0]
		if a.status != http.StatusOK || a.header.Get(trustpay.HeaderStatus) != "VALID" {
			t.Errorf("asks for a receipt %v: %d %s, Vouch-Status %q", asks, a.status, a.body, a.header.Get(trustpay.HeaderStatus))
		}
		if got := a.header.Get(trustpay.HeaderReceipt); strings.HasPrefix(got, "rcpt_") != asks {
			t.Errorf("asks for a receipt %v: Vouch-Receipt %q", asks, got)
		}
	}
}

// nilCaller answers every call with neither a response nor an error, as
// a faulty Caller might.
type nilCaller struct{}

func (nilCaller) Call(context.Context, *trust.Request) (*trust.Response, error) { return nil, nil }

// TestRoute_Judge_nilResponse: a Caller that returns neither a response
// nor an error is a validation that failed (StatusError, naming it),
// not a panic in the middleware's gate.
func TestRoute_Judge_nilResponse(t *testing.T) {
	j := trustpay.Route{Caller: nilCaller{}}.Judge(t.Context(), router.NewStringInput("2+2"), json.RawMessage(`"4"`), receipt.Request{})
	if j.Status != trustpay.StatusError || j.Err == nil || !strings.Contains(j.Err.Error(), "nil response") {
		t.Errorf("Judge = %+v, want StatusError naming the nil response", j)
	}
}

// TestGate_receiptIsTheSellers: the receipt of a gated answer's
// validation is the seller's, issued to the caller its trust service is
// called as (here an in-process service, whose caller is
// trust.DefaultCaller), never to the buyer, whom the route knows only by
// its payment; the buyer gets its id.
func TestGate_receiptIsTheSellers(t *testing.T) {
	s := newSeller(t, 0)
	a := s.buy(t, "Refunds within 30 days, at most 2 a year.", true)[0]
	id := a.header.Get(trustpay.HeaderReceipt)
	rec, err := s.receipts.Get(t.Context(), id, time.Now())
	if err != nil {
		t.Fatalf("Vouch-Receipt %q: %v", id, err)
	}
	if rec.Owner != trust.DefaultCaller {
		t.Errorf("the receipt's owner is %q, want the seller's caller %q", rec.Owner, trust.DefaultCaller)
	}
}
