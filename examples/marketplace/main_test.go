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
		"order-1: 200, Vouch-Status VALID, receipt rcpt_",
		"settled: 10000 atomic units",
		"order-2: 502 not_delivered, Vouch-Status INVALID",
		"not settled: no payment response, the buyer keeps its money",
		"  order-2: 502 not_delivered, Vouch-Status INVALID",
		"order-3: 200, Vouch-Status VALID",
		"arbitration: SELLER_VALID",
		"the buyer signed 3 payments and paid 20000 atomic units ($0.020000)",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "tx 0x"); n != 4 { // two deliveries, two settlements listed
		t.Errorf("%d transactions in the output, want 4:\n%s", n, got)
	}
}
