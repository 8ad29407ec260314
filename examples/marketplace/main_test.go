package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/escrow"
)

func TestRun(t *testing.T) {
	defer goleak.VerifyNone(t, goleak.IgnoreCurrent())
	var out bytes.Buffer
	if err := run(context.Background(), &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	got := out.String()
	for _, want := range []string{
		"balances before: buyer 1000000, seller 1000000, escrow 1000000, operator 1000000",
		"order-1: 200, Vouch-Status VALID, receipt rcpt_",
		"escrow: 10000 of 10000 held, captured",
		"order-2: 502 not_delivered, Vouch-Status INVALID",
		"escrow: the hold of 10000 voided, the buyer keeps its money",
		"  order-2: 502 not_delivered, Vouch-Status INVALID",
		"order-3: 200, Vouch-Status VALID",
		"arbitration: SELLER_INVALID",
		"refunded: 10000 atomic units to the buyer by the seller's policy",
		// The buyer paid order-1 only; the seller keeps both captures and
		// the operator funded the refund.
		"balances after:  buyer 990000, seller 1020000, escrow 1000000, operator 990000",
		"the buyer paid for order-1 only: order-2 not charged, order-3 refunded, as the balances show",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}

// A refund the facilitator refused is reported as refused, never as
// refunded: no money moved.
func TestRefundLine(t *testing.T) {
	refused := x402.EscrowOutcome{Key: escrow.DisputeKey, Operation: x402.EscrowRefund, Amount: "10000",
		Settlement: x402.SettleResponse{ErrorReason: "invalid_auth_capture_evm_refund_deadline_expired", ErrorMessage: "the refund deadline has passed"}}
	paid := refused
	paid.Settlement = x402.SettleResponse{Success: true, Transaction: "0x5c42f228b059cdcf8d74834185ea94f4875e937a621af10b18b51ddadb0d1d15"}
	for _, tc := range []struct {
		o        x402.EscrowOutcome
		refunded bool
		want     string
	}{
		{paid, true, "refunded: 10000 atomic units to the buyer by the seller's policy, tx 0x5c42f228…1d15"},
		{refused, false, "refund of 10000 refused by the facilitator (invalid_auth_capture_evm_refund_deadline_expired: the refund deadline has passed): no money moved"},
		{x402.EscrowOutcome{}, false, ""},
	} {
		if got := refundLine(tc.o, tc.refunded); got != tc.want {
			t.Errorf("refundLine(%+v, %v) = %q, want %q", tc.o, tc.refunded, got, tc.want)
		}
	}
}

// The closing line says what happened to each order, not what the example
// expects to happen.
func TestClosingLine(t *testing.T) {
	for _, tc := range []struct {
		paid, uncharged, refunded []string
		want                      string
	}{
		{[]string{"order-1"}, []string{"order-2"}, []string{"order-3"}, "the buyer paid for order-1 only: order-2 not charged, order-3 refunded, as the balances show"},
		{[]string{"order-1", "order-3"}, []string{"order-2"}, nil, "the buyer paid for order-1 and order-3 only: order-2 not charged, as the balances show"},
		{[]string{"order-1", "order-2", "order-3"}, nil, nil, "the buyer paid for order-1 and order-2 and order-3, as the balances show"},
		{nil, []string{"order-2"}, []string{"order-1"}, "the buyer paid for no order: order-2 not charged, order-1 refunded, as the balances show"},
	} {
		if got := closingLine(tc.paid, tc.uncharged, tc.refunded); got != tc.want {
			t.Errorf("closingLine(%v, %v, %v) = %q, want %q", tc.paid, tc.uncharged, tc.refunded, got, tc.want)
		}
	}
}
