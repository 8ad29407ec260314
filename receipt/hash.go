package receipt

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-json-experiment/json/jsontext"
)

// HashPrefix starts every hash the package writes: the algorithm, then a
// colon, then 64 lowercase hex digits.
const HashPrefix = "sha256:"

// Hash returns "sha256:<hex>" of the RFC 8785 (JCS) canonical JSON of v,
// where v is first encoded with encoding/json. What is hashed is the JSON
// value, not the Go value or any text it came from:
//
//   - a string is hashed as its JSON string, quotes included: the input
//     "hello" hashes the 7 bytes "hello" with its quotes;
//   - an object is hashed with its members sorted and no white space, so
//     member order and formatting do not change the hash;
//   - a number is hashed in its shortest ECMAScript form (1.0 and 1 hash
//     alike); json.RawMessage and json.Number pass through unchanged
//     before canonicalization;
//   - nil is hashed as JSON null.
//
// Anyone can recompute a hash from the original value with any RFC 8785
// implementation and SHA-256.
func Hash(v any) (string, error) {
	data, err := json.Marshal(v)
	if err != nil {
		return "", fmt.Errorf("receipt: failed to encode value for hashing: %w", err)
	}
	return HashJSON(data)
}

// HashJSON returns "sha256:<hex>" of the RFC 8785 canonical form of the
// JSON text data. It fails if data is not one valid JSON value.
func HashJSON(data []byte) (string, error) {
	canon, err := canonicalize(data)
	if err != nil {
		return "", err
	}
	sum := sha256.Sum256(canon)
	return HashPrefix + hex.EncodeToString(sum[:]), nil
}

// canonicalize returns the RFC 8785 canonical form of data: "the JSON
// data MUST be serialized ... with whitespace removed, ... properties
// sorted by their UTF-16 code units, ... numbers in the ECMAScript
// Number.prototype.toString form" (RFC 8785, section 3.2). Repeated member
// names and invalid UTF-8 are errors. data is not modified.
//
// It is jsontext.Value.Canonicalize of github.com/go-json-experiment/json,
// the reference implementation of Go's encoding/json/v2; a differential
// test and fuzz target check it byte for byte against
// github.com/gowebpki/jcs on the package's receipts and corpus.
//
// jsontext writes a number beyond the range of an IEEE 754 double as the
// largest double, where RFC 8785 (and jcs) refuse it; so when the
// canonical form holds that largest double, the input's numbers are read
// again and one out of range is an error.
func canonicalize(data []byte) ([]byte, error) {
	v := jsontext.Value(bytes.Clone(data))
	if err := v.Canonicalize(); err != nil {
		return nil, fmt.Errorf("receipt: failed to canonicalize JSON: %w", err)
	}
	if bytes.Contains(v, maxDouble) {
		if err := checkNumbersInRange(data); err != nil {
			return nil, err
		}
	}
	return v, nil
}

// maxDouble is how the canonical form writes math.MaxFloat64, and any
// larger number jsontext clamps to it.
var maxDouble = []byte("1.7976931348623157e+308")

// checkNumbersInRange fails if a number in the JSON text data lies beyond
// the range of an IEEE 754 double.
func checkNumbersInRange(data []byte) error {
	err := eachNumber(data, func(text string, _ jsontext.Pointer) error {
		if _, err := strconv.ParseFloat(text, 64); err != nil {
			return fmt.Errorf("number %s is out of the range of an IEEE 754 double", truncate(text, 40))
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("receipt: failed to canonicalize JSON: %w", err)
	}
	return nil
}

// validHash reports whether s is "sha256:" and 64 lowercase hex digits.
func validHash(s string) bool {
	h, ok := strings.CutPrefix(s, HashPrefix)
	if !ok || len(h) != 2*sha256.Size {
		return false
	}
	for _, c := range h {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
