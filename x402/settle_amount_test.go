package x402_test

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// otherAmount is the offline facilitator, reporting every settlement's
// amount as 1 atomic unit, whatever it settled.
type otherAmount struct{ *evm.Facilitator }

func (f otherAmount) Settle(ctx context.Context, p *x402.PaymentPayload, r x402.PaymentRequirements) (*x402.SettleResponse, error) {
	sr, err := f.Facilitator.Settle(ctx, p, r)
	if sr != nil {
		sr.Amount = "1"
	}
	return sr, err
}

// A settlement whose amount differs from the one charged is passed on as
// the facilitator answered it, and the server's log warns of it.
func TestMiddleware_settledAnotherAmountIsLogged(t *testing.T) {
	var log bytes.Buffer
	mw, err := x402.Middleware(x402.MiddlewareConfig{
		Facilitator: otherAmount{&evm.Facilitator{}},
		Routes:      map[string]x402.Price{"POST /paid": {Accepts: []x402.PaymentRequirements{offer(t)}}},
		Logger:      slog.New(slog.NewTextHandler(&log, nil)),
	})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(mw(http.HandlerFunc(echo)))
	defer srv.Close()
	resp := send(t, srv.URL, x402.HeaderPaymentSignature, proof(t, 2, nil))
	sr, err := x402.SettlementFromResponse(resp)
	if resp.StatusCode != http.StatusOK || err != nil || sr.Amount != "1" {
		t.Fatalf("status %d, settlement %+v, %v; want 200 with the facilitator's amount", resp.StatusCode, sr, err)
	}
	if !strings.Contains(log.String(), "settled another amount") || !strings.Contains(log.String(), "charged="+offer(t).Amount) {
		t.Errorf("the log does not warn of the amount:\n%s", log.String())
	}
}
