package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"go.uber.org/goleak"
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
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}
