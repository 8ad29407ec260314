package receipt

import (
	"crypto/rand"
	"encoding/base32"
	"strings"
)

// IDPrefix starts every receipt id.
const IDPrefix = "rcpt_"

// idEncoding writes ids in lowercase base32 without padding: URL-safe,
// case-insensitive, and free of characters that need escaping in a path.
var idEncoding = base32.NewEncoding("abcdefghijklmnopqrstuvwxyz234567").WithPadding(base32.NoPadding)

// idBytes is the count of random bytes in an id: 128 bits, so that ids
// can be neither guessed nor collide.
const idBytes = 16

// NewID returns a new receipt id: [IDPrefix] and 26 characters of
// lowercase base32 encoding 16 bytes from crypto/rand. Each decision gets
// its own id; nothing about the decision can be read from it.
func NewID() string {
	var b [idBytes]byte
	rand.Read(b[:]) // crypto/rand.Read never returns an error (Go 1.24+)
	return IDPrefix + idEncoding.EncodeToString(b[:])
}

// ValidID reports whether s has the form of an id made by [NewID]:
// [IDPrefix] and 26 characters of lowercase base32 that decode to 16
// bytes and encode back to the same characters. An id of any other form
// names no receipt.
func ValidID(s string) bool {
	rest, ok := strings.CutPrefix(s, IDPrefix)
	if !ok || len(rest) != idEncoding.EncodedLen(idBytes) {
		return false
	}
	// The decoder skips carriage returns and newlines: an id reads only
	// as the one it writes back.
	b, err := idEncoding.DecodeString(rest)
	return err == nil && idEncoding.EncodeToString(b) == rest
}
