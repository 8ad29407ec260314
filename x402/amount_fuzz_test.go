package x402_test

import (
	"errors"
	"math"
	"math/big"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/x402"
)

// maxAmount is the largest amount, math.MaxUint64, as a big.Int.
var maxAmount = new(big.Int).SetUint64(math.MaxUint64)

// FuzzParseAmount holds ParseAmount to big.Int: it accepts exactly the
// non-empty strings of ASCII digits whose value fits in a uint64 and
// reads that value; an accepted amount prints back as the same decimal
// without its leading zeros; a sign or a space next to it is refused;
// every refusal wraps ErrInvalidAmount.
func FuzzParseAmount(f *testing.F) {
	for _, s := range []string{"0", "1000", "007", "18446744073709551615", "18446744073709551616",
		"99999999999999999999999", "", "-1", "+1", " 1", "1 ", "1_000", "1e3", "0x10", "١٢"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := x402.ParseAmount(s)
		want, fits := new(big.Int), false
		if s != "" && strings.Trim(s, "0123456789") == "" {
			want.SetString(s, 10)
			fits = want.Cmp(maxAmount) <= 0
		}
		if err != nil {
			if fits {
				t.Fatalf("ParseAmount(%q) = %v, want %s", s, err, want)
			}
			if !errors.Is(err, x402.ErrInvalidAmount) {
				t.Fatalf("ParseAmount(%q) = %v, not an ErrInvalidAmount", s, err)
			}
			return
		}
		if !fits {
			t.Fatalf("ParseAmount(%q) = %d, want an error", s, n)
		}
		if new(big.Int).SetUint64(n).Cmp(want) != 0 {
			t.Fatalf("ParseAmount(%q) = %d, want %s", s, n, want)
		}
		if printed, trimmed := strconv.FormatUint(n, 10), strings.TrimLeft(s, "0"); printed != trimmed && (trimmed != "" || printed != "0") {
			t.Fatalf("ParseAmount(%q) = %d, which prints as %s", s, n, printed)
		}
		for _, bad := range []string{"-" + s, "+" + s, " " + s, s + " ", s + "\n", "$" + s} {
			if m, err := x402.ParseAmount(bad); err == nil {
				t.Fatalf("ParseAmount(%q) = %d, want a refusal", bad, m)
			}
		}
	})
}

// decimalPrice is what ParsePrice reads once it has trimmed white space
// and a leading "$": digits, then optionally a point and digits.
var decimalPrice = regexp.MustCompile(`^[0-9]*(\.[0-9]*)?$`)

// FuzzParsePrice holds ParsePrice to big.Rat: it accepts a price with 0
// to 36 decimals exactly when the price (white space and a "$" trimmed)
// is a decimal number whose value times 10^decimals is a whole number
// from 1 to math.MaxUint64, and then returns that number in decimal
// without leading zeros; the atomic amount, written back as a price of
// the same decimals, parses to itself; a minus sign is refused; every
// refusal wraps ErrInvalidAmount.
func FuzzParsePrice(f *testing.F) {
	for _, tc := range []struct {
		price    string
		decimals int
	}{
		{"$0.001", 6}, {"0.001", 6}, {"2", 6}, {" $1.50 ", 2}, {".5", 1}, {"5.", 0}, {"0.0000001", 6},
		{"0", 6}, {"$0.000", 6}, {"-1", 6}, {"+1", 6}, {"1e3", 6}, {"1.2.3", 6}, {".", 6}, {"$", 6},
		{"18446744073709.551615", 6}, {"18446744073709.551616", 6}, {"1", 37}, {"1", -1}, {"$ 1", 6},
	} {
		f.Add(tc.price, tc.decimals)
	}
	f.Fuzz(func(t *testing.T, price string, decimals int) {
		got, err := x402.ParsePrice(price, decimals)
		want, ok := priceIn(price, decimals)
		if err != nil {
			if ok {
				t.Fatalf("ParsePrice(%q, %d) = %v, want %s", price, decimals, err, want)
			}
			if !errors.Is(err, x402.ErrInvalidAmount) {
				t.Fatalf("ParsePrice(%q, %d) = %v, not an ErrInvalidAmount", price, decimals, err)
			}
			return
		}
		if !ok || got != want {
			t.Fatalf("ParsePrice(%q, %d) = %s, want %s (ok %v)", price, decimals, got, want, ok)
		}
		if n, err := x402.ParseAmount(got); err != nil || n == 0 || strconv.FormatUint(n, 10) != got {
			t.Fatalf("ParsePrice(%q, %d) = %q, not an amount in decimal: %d, %v", price, decimals, got, n, err)
		}
		back := got
		if decimals > 0 {
			padded := strings.Repeat("0", max(0, decimals+1-len(got))) + got
			back = padded[:len(padded)-decimals] + "." + padded[len(padded)-decimals:]
		}
		if again, err := x402.ParsePrice("$"+back, decimals); err != nil || again != got {
			t.Fatalf("ParsePrice(%q, %d) = %s, but its price %q reads as %q, %v", price, decimals, got, back, again, err)
		}
		if neg, err := x402.ParsePrice("-"+strings.TrimSpace(price), decimals); err == nil {
			t.Fatalf("ParsePrice(%q, %d) = %s, want a refusal", "-"+price, decimals, neg)
		}
	})
}

// priceIn computes with big.Rat the atomic amount of price in units with
// decimals decimals, and reports whether ParsePrice must accept it.
func priceIn(price string, decimals int) (string, bool) {
	s := strings.TrimPrefix(strings.TrimSpace(price), "$")
	if decimals < 0 || decimals > 36 || s == "" || s == "." || !decimalPrice.MatchString(s) {
		return "", false
	}
	r, ok := new(big.Rat).SetString("0" + s + "0") // "0.5" for ".5", "50" for "5.": a leading 0 changes nothing
	if !ok {
		panic("big.Rat refuses " + s)
	}
	if !strings.Contains(s, ".") {
		r.SetString(s) // no point: the trailing 0 would multiply by ten
	}
	r.Mul(r, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(decimals)), nil)))
	if !r.IsInt() || r.Sign() <= 0 || r.Num().Cmp(maxAmount) > 0 {
		return "", false
	}
	return r.Num().String(), true
}
