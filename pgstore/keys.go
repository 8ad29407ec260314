package pgstore

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode/utf8"
)

// keyEscape begins every key that [textKey] does not keep as itself.
const keyEscape = "\x01"

// maxKeyBytes is the longest key [textKey] keeps as itself. A primary key
// is a B-tree index, whose entries PostgreSQL limits to about 2,700 bytes
// (after compression); every key up to this length fits.
const maxKeyBytes = 2048

// textKey returns key as the text columns that hold the stores' keys keep
// it. PostgreSQL's text holds neither NUL nor bytes that are not UTF-8,
// and the primary key's index no entry much longer than 2,700 bytes,
// while a key is made of what a client sent: the from and nonce of a
// payment's authorization or its payment id, before the facilitator has
// checked any of it, or the name a TrialCaller gives a request. So that
// such a key is kept, as the in-memory stores keep it, rather than failed
// by the database as if it were down, textKey returns:
//
//   - key itself, when it is UTF-8 without NUL, at most maxKeyBytes long
//     and does not begin with keyEscape (every key the stores kept
//     before, in practice);
//   - keyEscape, '#' and the SHA-256 of key in hex, when key is longer;
//   - keyEscape and the bytes of key in hex otherwise.
//
// No two keys share a form (but for SHA-256 collisions).
func textKey(key string) string {
	switch {
	case len(key) > maxKeyBytes:
		sum := sha256.Sum256([]byte(key))
		return keyEscape + "#" + hex.EncodeToString(sum[:])
	case utf8.ValidString(key) && !strings.ContainsRune(key, 0) && !strings.HasPrefix(key, keyEscape):
		return key
	}
	return keyEscape + hex.EncodeToString([]byte(key))
}
