package jsonbody

import (
	"bytes"
	"encoding/json"
	"io"
)

// Canonical writes raw, one JSON value, in one form whatever its spacing,
// the order of its members or the escapes of its strings: members sorted
// by name, strings as encoding/json writes them (HTML characters not
// escaped), no spaces. Numbers keep their text, and a member named twice
// keeps its last value, as encoding/json reads it. It reports false, and
// returns raw, when raw is not exactly one JSON value.
func Canonical(raw []byte) ([]byte, bool) {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil || dec.Decode(new(any)) != io.EOF {
		return raw, false
	}
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if enc.Encode(v) != nil {
		return raw, false
	}
	return bytes.TrimSuffix(buf.Bytes(), []byte("\n")), true
}
