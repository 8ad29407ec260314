package consensus_test

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/vouchkit/vouch/consensus"
)

// FuzzDefaultKey checks DefaultKey on any raw answer a worker could
// send: it never panics, fails exactly when the bytes are not one JSON
// value, and keys raw JSON as it keys the value the JSON decodes to
// (numbers as written, json.Number), so that the short way it takes for
// plain integers and strings agrees with the long one.
func FuzzDefaultKey(f *testing.F) {
	for _, s := range []string{`18`, `-7`, `0`, `-0`, `007`, `123456789012345`, `1234567890123456`, `1e2`, `18.0`,
		`"42"`, `""`, `"a b"`, `" a"`, `"a  b"`, `"a\"b"`, `"<b>"`, `"é"`, `"\u0041"`, `"tab	x"`, `{"a":1}`, `[1, 2]`, `null`, `1e400`, `"`, ``} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := consensus.DefaultKey(json.RawMessage(b))
		var v any
		dec := json.NewDecoder(bytes.NewReader(b))
		dec.UseNumber()
		if jerr := dec.Decode(&v); jerr != nil || !json.Valid(b) {
			if err == nil {
				t.Fatalf("DefaultKey(%q) = %q, want an error: the bytes do not decode (%v)", b, got, jerr)
			}
			return
		}
		if err != nil {
			t.Fatalf("DefaultKey(%q): %v", b, err)
		}
		want, err := consensus.DefaultKey(v)
		if err != nil {
			t.Fatalf("DefaultKey(%#v): %v", v, err)
		}
		if got != want {
			t.Fatalf("DefaultKey(%q) = %q, want %q, the key of the value it decodes to", b, got, want)
		}
	})
}
