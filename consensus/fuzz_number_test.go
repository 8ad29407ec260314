package consensus_test

import (
	"encoding/json"
	"errors"
	"math"
	"strconv"
	"testing"

	"github.com/vouchkit/vouch/consensus"
)

// FuzzParseNumber checks the decoder of the numeric strategies on any
// output a worker could send: it never panics, fails only with
// ErrNotNumber, reads only finite numbers, reads a JSON number and the
// same number written in a JSON string alike, and reads back what
// encoding/json writes of the number it read.
func FuzzParseNumber(f *testing.F) {
	for _, s := range []string{`18`, `18.0`, `"18"`, `" -1.5e3 "`, `"1,000"`, `"$18"`, `"18 km"`, `1e400`, `{"x":1}`, `null`, `"+5"`, `-0`, `"0x10"`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, raw []byte) {
		x, err := consensus.ParseNumber(json.RawMessage(raw))
		if err != nil {
			if !errors.Is(err, consensus.ErrNotNumber) {
				t.Fatalf("ParseNumber(%q): %v does not wrap ErrNotNumber", raw, err)
			}
			return
		}
		if math.IsNaN(x) || math.IsInf(x, 0) {
			t.Fatalf("ParseNumber(%q) = %v", raw, x)
		}
		if s, ok := jsonString(raw); !ok {
			quoted, _ := json.Marshal(string(raw))
			if y, err := consensus.ParseNumber(json.RawMessage(quoted)); err != nil || y != x {
				t.Fatalf("ParseNumber(%s) = %v, %v; the number itself reads %v", quoted, y, err, x)
			}
		} else if y, err := consensus.ParseNumber(s); err != nil || y != x {
			t.Fatalf("ParseNumber of the Go string %q = %v, %v; of the JSON %q, %v", s, y, err, raw, x)
		}
		again, _ := json.Marshal(x)
		if y, err := consensus.ParseNumber(json.RawMessage(again)); err != nil || y != x {
			t.Fatalf("ParseNumber(%s) = %v, %v; want %v (read from %q, %s)", again, y, err, x, raw, strconv.FormatFloat(x, 'g', -1, 64))
		}
	})
}

// jsonString returns the string raw encodes, if it is a JSON string.
func jsonString(raw []byte) (string, bool) {
	var s string
	return s, json.Unmarshal(raw, &s) == nil
}
