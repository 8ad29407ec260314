package receipt_test

import (
	"testing"

	"github.com/vouchkit/vouch/receipt"
)

func TestEnvironment_Clamp(t *testing.T) {
	test, prod := receipt.TestEnvironment(), receipt.ProductionEnvironment()
	tests := []struct {
		env     receipt.Environment
		ttl     string
		vis     receipt.Visibility
		wantTTL int
		wantVis receipt.Visibility
		clamped bool
	}{
		// Test: at most 7 days, default 7.
		{test, "", "", 7, receipt.VisibilityPrivate, false},
		{test, "1d", "private", 1, receipt.VisibilityPrivate, false},
		{test, "7d", "shared", 7, receipt.VisibilityShared, false},
		{test, "8d", "shared", 7, receipt.VisibilityShared, true},
		{test, "30d", "", 7, receipt.VisibilityPrivate, true},
		{test, "90d", "public", 7, receipt.VisibilityShared, true},
		// Production: at most 90 days, default 30.
		{prod, "", "", 30, receipt.VisibilityPrivate, false},
		{prod, "7d", "", 7, receipt.VisibilityPrivate, false},
		{prod, "90d", "shared", 90, receipt.VisibilityShared, false},
		{prod, "91d", "", 90, receipt.VisibilityPrivate, true},
		{prod, "99999d", "", 90, receipt.VisibilityPrivate, true},
		{prod, "30d", "public", 30, receipt.VisibilityShared, true},
		// The zero Environment is production.
		{receipt.Environment{}, "", "", 30, receipt.VisibilityPrivate, false},
		{receipt.Environment{}, "120d", "", 90, receipt.VisibilityPrivate, true},
		// A private-only environment narrows shared too.
		{receipt.Environment{Name: "strict", MaxTTLDays: 14, DefaultTTLDays: 30, MaxVisibility: "private"}, "", "shared", 14, receipt.VisibilityPrivate, true},
		// An invalid request value counts as absent.
		{prod, "30", "everyone", 30, receipt.VisibilityPrivate, false},
	}
	for _, tc := range tests {
		got, err := tc.env.Clamp(receipt.Request{TTL: tc.ttl, Visibility: tc.vis})
		if err != nil {
			t.Errorf("%s.Clamp(%q, %q) = %v", tc.env.Name, tc.ttl, tc.vis, err)
			continue
		}
		want := receipt.Terms{TTLDays: tc.wantTTL, Visibility: tc.wantVis, Clamped: tc.clamped}
		if got != want {
			t.Errorf("%s.Clamp(%q, %q) = %+v, want %+v", tc.env.Name, tc.ttl, tc.vis, got, want)
		}
	}
}

func TestEnvironment_Clamp_invalidEnvironment(t *testing.T) {
	for _, env := range []receipt.Environment{
		{Name: "no max", DefaultTTLDays: 7},
		{Name: "no default", MaxTTLDays: 7},
		{Name: "negative", MaxTTLDays: -1, DefaultTTLDays: 1},
		{Name: "huge", MaxTTLDays: 100000, DefaultTTLDays: 1},
		{Name: "public", MaxTTLDays: 7, DefaultTTLDays: 7, MaxVisibility: "public"},
		{Name: "unknown visibility", MaxTTLDays: 7, DefaultTTLDays: 7, MaxVisibility: "world"},
	} {
		if _, err := env.Clamp(receipt.Request{}); err == nil {
			t.Errorf("Clamp under %q = nil error, want one", env.Name)
		}
	}
}

func TestTerms_TTL(t *testing.T) {
	if got := (receipt.Terms{TTLDays: 45}).TTL(); got != "45d" {
		t.Errorf("TTL() = %q, want 45d", got)
	}
}
