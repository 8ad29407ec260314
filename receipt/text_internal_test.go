package receipt

import "testing"

func TestSameDecimal(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"1", "1", true},
		{"1.0", "1", true},
		{"10e-1", "1", true},
		{"0.001", "1e-3", true},
		{"1e-07", "1e-7", true},
		{"1E+21", "1e21", true},
		{"-0", "0", true},
		{"0.0000e99999999999", "0", true},
		{"100", "1e2", true},
		{"9007199254740993", "9007199254740992", false},
		{"0.90000000000000001", "0.9", false},
		{"1e-999999999", "0", false},
		{"-1", "1", false},
		{"12", "21", false},
		{"1e9999999999", "1e308", false},
	} {
		if got := sameDecimal(tc.a, tc.b); got != tc.same {
			t.Errorf("sameDecimal(%s, %s) = %v, want %v", tc.a, tc.b, got, tc.same)
		}
	}
}
