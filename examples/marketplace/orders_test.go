package main

import (
	"bytes"
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/evm"
)

// The judges pass no delivery whose source text they cannot find: an
// input that is neither text nor an order with a source has no figures
// to check, and a VALID verdict on it would pass any delivery.
func TestJudge_noSource(t *testing.T) {
	input, err := router.NewObjectInput(map[string]string{"text": "Refunds within 30 days, at most 2 a year."})
	if err != nil {
		t.Fatal(err)
	}
	res, err := judge().Work(context.Background(), &router.Job{TaskInput: input, Claim: &router.Claim{Output: []byte(`"Refunds within a month."`)}})
	if err != nil {
		t.Fatal(err)
	}
	if res.Verdict == router.VerdictValid {
		t.Errorf("judge(an order without a source) = %s %v, want no VALID verdict", res.Verdict, res.Reasons)
	}
}

// An order refused with an answer that is not a problem (the seller's own
// 404, here) is reported with the seller's words, not as empty fields.
func TestBuy_plainRefusal(t *testing.T) {
	ctx := context.Background()
	p, err := start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer p.close()
	payer, err := evm.NewPayer(buyerKey)
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	b := &buyer{client: &http.Client{Transport: &x402.Transport{Payer: payer, Policy: x402.Policy{Schemes: []string{x402.SchemeAuthCapture}}}}, seller: p.seller.URL, out: &out}
	delivered, _, err := b.buy(ctx, order{id: "order-9", source: "A source the seller has no summary of: 7 days."}, "")
	if err != nil || delivered {
		t.Fatalf("buy = %v, %v; want not delivered, no error", delivered, err)
	}
	if want := "order-9: 404, not delivered: no summary of that source\n"; !strings.HasPrefix(out.String(), want) {
		t.Errorf("buy printed:\n%s\nwant it to start %q", &out, want)
	}
}
