package httpapi

import (
	"bytes"
	"encoding/json"
)

// marshal returns the JSON of v as json.Marshal does, but without
// escaping <, > and & (nor U+2028 and U+2029), which json.Marshal does
// inside a json.RawMessage too: a receipt in an answer, or sent to be
// verified, keeps the bytes it was signed as, not another spelling of
// them. Answers are application/json served with nosniff, as problems
// (written the same way) are.
func marshal(v any) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), nil
}
