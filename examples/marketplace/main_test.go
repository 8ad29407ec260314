package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	var out bytes.Buffer
	if err := run(context.Background(), &out); err != nil {
		t.Fatalf("run: %v\n%s", err, out.String())
	}
	got := out.String()
	for _, want := range []string{
		"job-1 (validation): VALID",
		"job-2 (validation): INVALID",
		"escrow refunded to the buyer",
		"job-3 (arbitration): SELLER_VALID",
		"seller balance: 1000 cents; buyer refunds: 500 cents; 3 receipts kept",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("output lacks %q:\n%s", want, got)
		}
	}
}
