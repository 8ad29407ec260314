package receipt

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
)

// signatureMember returns the text of the member signing.signature with
// value sig as it appears in canonical JSON. sig is unpadded base64url,
// which JSON writes without escapes.
func signatureMember(sig string) []byte {
	return []byte(`"signature":"` + sig + `"`)
}

// signingMessage returns the bytes a signature covers: the canonical JSON
// canon of a receipt whose signing.signature is sig, with that value
// replaced by "". In canonical JSON a quote inside a string is escaped, so
// the text "signature":"<sig>" can only be a member; canon holds it at
// least once, for signing.signature, and when it holds it exactly once
// that is the member to blank. Replacing one string value changes no
// member order, so the result is the canonical JSON of the receipt with
// an empty signature (RFC 8785, section 3.2.3: members are sorted by name
// alone).
func signingMessage(canon []byte, sig string) ([]byte, error) {
	// Find the member by its short prefix (a fast search), then compare
	// the value; count every occurrence of the whole member.
	prefix := signatureMember("")
	prefix = prefix[:len(prefix)-1] // "signature":"
	at, found := -1, 0
	for i := 0; ; {
		j := bytes.Index(canon[i:], prefix)
		if j < 0 {
			break
		}
		i += j + len(prefix)
		if len(canon)-i > len(sig) && string(canon[i:i+len(sig)]) == sig && canon[i+len(sig)] == '"' {
			at = i - len(prefix)
			found++
		}
	}
	if found != 1 {
		return nil, errors.New("receipt: the signature member must appear exactly once")
	}
	member := len(prefix) + len(sig) + 1
	msg := make([]byte, 0, len(canon)-len(sig))
	msg = append(msg, canon[:at]...)
	msg = append(msg, signatureMember("")...)
	return append(msg, canon[at+member:]...), nil
}

// signedJSON is the inverse of signingMessage for the package's own
// receipts: it fills the empty signature of msg with sig. A Receipt has
// one member named signature, so the empty one occurs once.
func signedJSON(msg []byte, sig string) ([]byte, error) {
	empty := signatureMember("")
	if bytes.Count(msg, empty) != 1 {
		return nil, errors.New("receipt: the signing message must hold one empty signature")
	}
	return bytes.Replace(msg, empty, signatureMember(sig), 1), nil
}

// encode returns the RFC 8785 canonical JSON of r.
func encode(r *Receipt) ([]byte, error) {
	flat, err := json.Marshal(r)
	if err != nil {
		return nil, fmt.Errorf("receipt: failed to encode receipt: %w", err)
	}
	return canonicalize(flat)
}
