package consensus

import (
	"bytes"
	"encoding/json"
	"strconv"
	"strings"
)

// DefaultKey is the default answer equivalence of Policy.Key. Two answers
// are equivalent when they encode to the same canonical JSON, where:
//
//   - the answer is encoded with encoding/json (pass raw JSON as a
//     json.RawMessage; a []byte encodes as a base64 string) and decoded back
//     into generic values, so the order of object keys does not matter and
//     numbers compare as IEEE 754 doubles (1, 1.0 and 1e0 are equal, and so
//     are 0 and -0), as in RFC 8785; a number beyond the range of a double
//     (1e400) compares as it is written;
//   - every string value, at any depth, is trimmed and each run of white
//     space inside it is folded to one space, so "a  b\n" equals "a b";
//     object keys are compared as they are.
//
// The key of a nil answer is "null". DefaultKey fails only for answers that
// encoding/json cannot encode, such as channels or functions.
func DefaultKey(answer any) (string, error) {
	if answer == nil {
		return "null", nil
	}
	if raw, ok := answer.(json.RawMessage); ok && canonical(raw) {
		return string(raw), nil
	}
	return canonicalKey(answer)
}

// canonicalKey is DefaultKey the long way: encoded, decoded, folded and
// encoded again.
func canonicalKey(answer any) (string, error) {
	raw, err := json.Marshal(answer)
	if err != nil {
		return "", err
	}
	// Numbers are decoded as written, so that one beyond a double's
	// range is not an error; fold turns the others into doubles.
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return "", err
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	// Maps are encoded with sorted keys, which makes the result canonical.
	if err := enc.Encode(fold(v)); err != nil {
		return "", err
	}
	return strings.TrimSuffix(buf.String(), "\n"), nil
}

// canonical reports whether raw is already its own DefaultKey, so that
// the common answers of a delegation skip the round trip: an integer of
// at most 15 digits (exact as a double, which encodes it digit for
// digit), or a string of printable ASCII other than the quote and the
// backslash, with no space at either end and no two in a row.
func canonical(raw []byte) bool {
	switch n := len(raw); {
	case n == 0:
		return false
	case raw[0] == '"':
		if n < 2 || raw[n-1] != '"' {
			return false
		}
		body := raw[1 : n-1]
		for i, c := range body {
			if c < 0x20 || c > 0x7e || c == '"' || c == '\\' {
				return false
			}
			if c == ' ' && (i == 0 || i == len(body)-1 || body[i-1] == ' ') {
				return false
			}
		}
		return true
	default:
		digits := raw
		if digits[0] == '-' {
			digits = digits[1:]
		}
		if len(digits) == 0 || len(digits) > 15 || digits[0] == '0' && (len(digits) > 1 || len(raw) > 1) {
			return false // empty, too long for a double, a leading zero, or -0
		}
		for _, c := range digits {
			if c < '0' || c > '9' {
				return false
			}
		}
		return true
	}
}

// fold trims and folds the white space of every string inside v, in
// place, and turns every number into a double (-0 into 0), but for one
// beyond a double's range, which stays as written.
func fold(v any) any {
	switch v := v.(type) {
	case string:
		return strings.Join(strings.Fields(v), " ")
	case json.Number:
		x, err := strconv.ParseFloat(string(v), 64)
		if err != nil {
			return v // beyond a double's range
		}
		return x + 0 // -0 + 0 is 0
	case []any:
		for i := range v {
			v[i] = fold(v[i])
		}
	case map[string]any:
		for k := range v {
			v[k] = fold(v[k])
		}
	}
	return v
}
