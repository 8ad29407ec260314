package fairstore

import "testing"

func TestOwnerOf(t *testing.T) {
	tests := []struct {
		caller string
		bits   int
		want   string
	}{
		{"ip:2001:db8:1:2:3:4:5:6", 64, "ip:2001:db8:1:2::/64"},
		{"ip:2001:db8:1:2:3:4:5:6", 48, "ip:2001:db8:1::/48"},
		{"ip:2001:db8:1:2:3:4:5:6 alice", 64, "ip:2001:db8:1:2::/64 alice"},
		{"ip:2001:db8::1", 0, "ip:2001:db8::1"},
		{"ip:2001:db8::1", 128, "ip:2001:db8::1"},
		{"ip:192.0.2.1", 64, "ip:192.0.2.1"},
		{"ip:::ffff:192.0.2.1", 64, "ip:::ffff:192.0.2.1"},
		{"ip:not-an-address", 64, "ip:not-an-address"},
		{"trial:ip:2001:db8:1:2:3:4:5:6", 64, "trial:ip:2001:db8:1:2::/64"},
		{"trial:ip:192.0.2.1", 64, "trial:ip:192.0.2.1"},
		{"trial:alice", 64, "trial:alice"},
		{"payer:0xabc", 64, "payer:0xabc"},
		{"alice", 64, "alice"},
		{"", 64, ""},
	}
	for _, tt := range tests {
		if got := OwnerOf(tt.caller, tt.bits); got != tt.want {
			t.Errorf("OwnerOf(%q, %d) = %q, want %q", tt.caller, tt.bits, got, tt.want)
		}
	}
}
