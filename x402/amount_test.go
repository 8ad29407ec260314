package x402_test

import (
	"errors"
	"testing"

	"github.com/vouchkit/vouch/x402"
)

func TestParsePrice(t *testing.T) {
	for _, tc := range []struct {
		price    string
		decimals int
		want     string // "" for an error
	}{
		{"$0.001", 6, "1000"},
		{"0.001", 6, "1000"},
		{"$1", 6, "1000000"},
		{"$0.10", 6, "100000"},
		{"2.5", 18, "2500000000000000000"},
		{".5", 2, "50"},
		{"$0.0000001", 6, ""},
		{"$0", 6, ""},
		{"-1", 6, ""},
		{"$", 6, ""},
		{"1e3", 6, ""},
		{"99999999999999", 6, ""},
	} {
		got, err := x402.ParsePrice(tc.price, tc.decimals)
		if got != tc.want || (err != nil) != (tc.want == "") {
			t.Errorf("ParsePrice(%q, %d) = %q, %v; want %q", tc.price, tc.decimals, got, err, tc.want)
		}
		if err != nil && !errors.Is(err, x402.ErrInvalidAmount) {
			t.Errorf("ParsePrice(%q) err = %v, want ErrInvalidAmount", tc.price, err)
		}
	}
}

func TestParseAmount(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want uint64
		ok   bool
	}{{"0", 0, true}, {"1000", 1000, true}, {"18446744073709551615", 1<<64 - 1, true}, {"18446744073709551616", 0, false}, {"+1", 0, false}, {"1.0", 0, false}, {"", 0, false}} {
		got, err := x402.ParseAmount(tc.in)
		if got != tc.want || (err == nil) != tc.ok {
			t.Errorf("ParseAmount(%q) = %d, %v; want %d, ok %v", tc.in, got, err, tc.want, tc.ok)
		}
	}
}
