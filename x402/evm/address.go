package evm

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	"golang.org/x/crypto/sha3"
)

// Address is a 20-byte EVM account or contract address.
type Address [20]byte

// ParseAddress reads a hex address with its 0x prefix. All-lower and
// all-upper case are accepted as is; mixed case must carry a valid EIP-55
// checksum, which catches most typing errors.
func ParseAddress(s string) (Address, error) {
	var a Address
	h, ok := strings.CutPrefix(s, "0x")
	if !ok {
		h, ok = strings.CutPrefix(s, "0X")
	}
	if !ok || len(h) != 40 {
		return a, fmt.Errorf("evm: address %q is not 0x followed by 40 hex digits", s)
	}
	if _, err := hex.Decode(a[:], []byte(h)); err != nil {
		return a, fmt.Errorf("evm: address %q is not 0x followed by 40 hex digits", s)
	}
	if h != strings.ToLower(h) && h != strings.ToUpper(h) && a.String()[2:] != h {
		return a, fmt.Errorf("evm: address %q has a wrong EIP-55 checksum", s)
	}
	return a, nil
}

// String returns the address with its EIP-55 checksum (mixed case).
func (a Address) String() string {
	lower := hex.EncodeToString(a[:])
	sum := keccak([]byte(lower))
	out := []byte(lower)
	for i, c := range out {
		nibble := sum[i/2] >> 4
		if i%2 == 1 {
			nibble = sum[i/2] & 0x0f
		}
		if c >= 'a' && nibble >= 8 {
			out[i] = c - 'a' + 'A'
		}
	}
	return "0x" + string(out)
}

// keccak returns the Keccak-256 hash of the concatenated parts, the hash
// Ethereum uses (not the finalized SHA3-256).
func keccak(parts ...[]byte) [32]byte {
	h := sha3.NewLegacyKeccak256()
	for _, p := range parts {
		h.Write(p)
	}
	var out [32]byte
	h.Sum(out[:0])
	return out
}

// parseHex32 reads 0x followed by 64 hex digits.
func parseHex32(s string) ([32]byte, error) {
	var b [32]byte
	h, ok := strings.CutPrefix(s, "0x")
	if !ok || len(h) != 64 {
		return b, errors.New("not 0x followed by 64 hex digits")
	}
	if _, err := hex.Decode(b[:], []byte(h)); err != nil {
		return b, errors.New("not 0x followed by 64 hex digits")
	}
	return b, nil
}
