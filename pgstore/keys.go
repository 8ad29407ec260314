package pgstore

import (
	"encoding/hex"
	"strings"
	"unicode/utf8"
)

// keyEscape begins every key that [textKey] writes in hex.
const keyEscape = "\x01"

// textKey returns key as the text columns that hold the keys of
// payments keep it: key itself when it is UTF-8 without NUL and does not
// begin with keyEscape, and otherwise keyEscape followed by key's bytes
// in hex, which no key kept as itself begins with. PostgreSQL's text
// holds neither NUL nor bytes that are not UTF-8, and a key of a payment
// is made of what its payer wrote (the from and nonce of its
// authorization, a payment id) before the facilitator has checked any
// of it: such a key is kept, told apart from every other, and refused by
// the facilitator as the in-memory stores let it be, not failed by the
// database as if it were down.
func textKey(key string) string {
	if utf8.ValidString(key) && !strings.ContainsRune(key, 0) && !strings.HasPrefix(key, keyEscape) {
		return key
	}
	return keyEscape + hex.EncodeToString([]byte(key))
}
