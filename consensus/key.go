package consensus

import (
	"bytes"
	"encoding/json"
	"strings"
)

// DefaultKey is the default answer equivalence of Policy.Key. Two answers
// are equivalent when they encode to the same canonical JSON, where:
//
//   - the answer is encoded with encoding/json (pass raw JSON as a
//     json.RawMessage; a []byte encodes as a base64 string) and decoded back
//     into generic values, so the order of object keys does not matter and
//     numbers compare as IEEE 754 doubles (1, 1.0 and 1e0 are equal), as in
//     RFC 8785;
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
	raw, err := json.Marshal(answer)
	if err != nil {
		return "", err
	}
	var v any
	if err := json.Unmarshal(raw, &v); err != nil {
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

// fold trims and folds the white space of every string inside v, in place.
func fold(v any) any {
	switch v := v.(type) {
	case string:
		return strings.Join(strings.Fields(v), " ")
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
