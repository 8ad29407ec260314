package x402

import (
	"fmt"
	"strconv"
	"strings"
)

// ParseAmount reads an amount in atomic units: a decimal string of digits,
// such as the "amount" of an offer. Amounts beyond uint64 are rejected;
// no payment this package makes comes near that.
func ParseAmount(s string) (uint64, error) {
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, fmt.Errorf("%w: %q is not a string of digits", ErrInvalidAmount, s)
	}
	n, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %q is too large", ErrInvalidAmount, s)
	}
	return n, nil
}

// ParsePrice converts a price in whole units of a token, written like
// "$0.001", "0.001" or "2", into atomic units of a token with the given
// number of decimals (6 for USDC): ParsePrice("$0.001", 6) is "1000". A
// price with more fractional digits than decimals, a negative or empty
// price, and a price of zero are errors wrapping ErrInvalidAmount.
func ParsePrice(price string, decimals int) (string, error) {
	s := strings.TrimPrefix(strings.TrimSpace(price), "$")
	whole, frac, _ := strings.Cut(s, ".")
	if decimals < 0 || decimals > 36 {
		return "", fmt.Errorf("%w: %d decimals", ErrInvalidAmount, decimals)
	}
	if whole == "" && frac == "" || strings.TrimLeft(whole+frac, "0123456789") != "" {
		return "", fmt.Errorf("%w: price %q is not a decimal number", ErrInvalidAmount, price)
	}
	frac = strings.TrimRight(frac, "0")
	if len(frac) > decimals {
		return "", fmt.Errorf("%w: price %q has more than %d decimal places", ErrInvalidAmount, price, decimals)
	}
	atomic := strings.TrimLeft(whole+frac+strings.Repeat("0", decimals-len(frac)), "0")
	if atomic == "" {
		return "", fmt.Errorf("%w: price %q is zero", ErrInvalidAmount, price)
	}
	if _, err := ParseAmount(atomic); err != nil {
		return "", fmt.Errorf("%w: price %q is too large", ErrInvalidAmount, price)
	}
	return atomic, nil
}
