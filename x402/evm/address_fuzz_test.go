package evm_test

import (
	"encoding/hex"
	"slices"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/x402/evm"
)

// eip55Examples are checksummed addresses given as examples in EIP-55.
var eip55Examples = []string{
	"0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed", "0xfB6916095ca1df60bB79Ce92cE3Ea74c37c5d359",
	"0xdbF03B407c01E7cD3CBea99509d93f8DDDC8C6FB", "0xD1220A0cf47c7B9Be7A2E6BA89F429762e7b9aDb",
}

// FuzzParseAddress holds ParseAddress to its rule: it accepts exactly 0x
// or 0X followed by 40 hex digits that are all lower case, all upper case,
// or in the EIP-55 checksummed form of the address they spell, and reads
// the address they spell. An accepted address's checksummed form, and its
// all-lower and all-upper forms, parse to the same address; the case of
// one letter of a checksummed form that mixes cases, changed, is refused
// unless that leaves the digits in one case.
func FuzzParseAddress(f *testing.F) {
	for _, s := range []string{
		"0x857b06519E91e3A54538791bDbb0E22373e36b66", "0x857b06519e91e3a54538791bdbb0e22373e36b66",
		"0X857B06519E91E3A54538791BDBB0E22373E36B66", "0x857b06519E91e3A54538791bDbb0E22373e36B66",
		eip55Examples[0], eip55Examples[1], eip55Examples[2], eip55Examples[3],
		"0x0000000000000000000000000000000000000000", "857b06519E91e3A54538791bDbb0E22373e36b66",
		"0x857b06519E91e3A54538791bDbb0E22373e36b6", "0xZZ7b06519E91e3A54538791bDbb0E22373e36b66",
		" 0x857b06519e91e3a54538791bdbb0e22373e36b66", "0x+57b06519e91e3a54538791bdbb0e22373e36b66", "",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a, err := evm.ParseAddress(s)
		if err != nil && slices.Contains(eip55Examples, s) {
			t.Fatalf("ParseAddress(%q), an example of EIP-55, = %v", s, err)
		}
		h, prefixed := strings.CutPrefix(s, "0x")
		if !prefixed {
			h, prefixed = strings.CutPrefix(s, "0X")
		}
		b, decErr := hex.DecodeString(h)
		wellFormed := prefixed && len(h) == 40 && decErr == nil
		var want evm.Address
		copy(want[:], b)
		oneCase := h == strings.ToLower(h) || h == strings.ToUpper(h)
		if wellFormed && (oneCase || "0x"+h == want.String()) != (err == nil) {
			t.Fatalf("ParseAddress(%q) = %v, %v; checksummed form %s", s, a, err, want)
		}
		if err != nil {
			return
		}
		if !wellFormed || a != want {
			t.Fatalf("ParseAddress(%q) = %v, want %x or an error", s, a, want[:])
		}
		cs := a.String()
		if !strings.EqualFold(cs, "0x"+h) {
			t.Fatalf("ParseAddress(%q).String() = %s, another address", s, cs)
		}
		for _, form := range []string{cs, strings.ToLower(cs), "0x" + strings.ToUpper(cs[2:])} {
			if again, err := evm.ParseAddress(form); err != nil || again != a {
				t.Fatalf("ParseAddress(%q) = %v; its form %q reads as %v, %v", s, a, form, again, err)
			}
		}
		for i := 2; i < len(cs); i++ {
			c := cs[i]
			switch {
			case c >= 'a' && c <= 'f':
				c -= 'a' - 'A'
			case c >= 'A' && c <= 'F':
				c += 'a' - 'A'
			default:
				continue
			}
			flipped := cs[:i] + string(c) + cs[i+1:]
			if h := flipped[2:]; h == strings.ToLower(h) || h == strings.ToUpper(h) {
				continue
			}
			if _, err := evm.ParseAddress(flipped); err == nil {
				t.Fatalf("ParseAddress(%q), one letter's case changed in %s, is accepted", flipped, cs)
			}
		}
	})
}
