package embedkey

import (
	"encoding/json"
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/vouchkit/vouch/consensus"
)

// FuzzDecodeEmbeddings feeds the decoder arbitrary replies: it must return
// either n vectors of finite numbers, none all zeros, of one dimension, or an error wrapping
// ErrMalformedReply or ErrBadVectors, and never panic. The seed corpus is
// in testdata/fuzz/FuzzDecodeEmbeddings.
func FuzzDecodeEmbeddings(f *testing.F) {
	f.Add([]byte(`{"object":"list","data":[{"object":"embedding","index":0,"embedding":[0.1,0.2]},{"object":"embedding","index":1,"embedding":[0.3,0.4]}]}`), 2)
	f.Add([]byte(`{"data":[{"embedding":[1]}]}`), 1)
	f.Fuzz(func(t *testing.T, data []byte, n int) {
		n = n & 7
		vecs, err := decodeEmbeddings(data, n)
		if err != nil {
			if !errors.Is(err, ErrMalformedReply) && !errors.Is(err, ErrBadVectors) {
				t.Fatalf("error %v wraps neither sentinel", err)
			}
			return
		}
		if len(vecs) != n {
			t.Fatalf("%d vectors for %d inputs", len(vecs), n)
		}
		for i, v := range vecs {
			if len(v) == 0 || len(v) != len(vecs[0]) {
				t.Fatalf("vector %d has %d dimensions, vector 0 has %d", i, len(v), len(vecs[0]))
			}
			nonZero := false
			for _, x := range v {
				if math.IsInf(x, 0) || math.IsNaN(x) {
					t.Fatalf("vector %d holds %v", i, x)
				}
				nonZero = nonZero || x != 0
			}
			if !nonZero {
				t.Fatalf("vector %d is a zero vector", i)
			}
			if c := cosine(v, vecs[0]); !(c >= -1 && c <= 1) {
				t.Fatalf("cosine %v outside [-1, 1]", c)
			}
			if c := cosine(v, v); math.Abs(c-1) > 1e-9 {
				t.Fatalf("vector %d's cosine with itself is %v", i, c)
			}
		}
	})
}

// FuzzTextOf reads a replica's output, a worker's JSON, as Group does
// before embedding it: a JSON string is its text with its white space
// folded, which reads back the same; any other value is its answer key
// (consensus.DefaultKey), an error exactly when the key is one.
func FuzzTextOf(f *testing.F) {
	for _, s := range []string{`"  Paris,\n the capital "`, `{"b":1,"a":[1.0,"x"]}`, `51`, `1e400`, `"\ud800"`, `null`} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		if !json.Valid(data) {
			return // the run's output is JSON
		}
		text, err := textOf(json.RawMessage(data))
		var s string
		if json.Unmarshal(data, &s) == nil {
			if err != nil || text != strings.Join(strings.Fields(s), " ") {
				t.Fatalf("textOf(%s) = %q, %v", data, text, err)
			}
			again, _ := json.Marshal(text)
			if t2, err := textOf(again); err != nil || t2 != text {
				t.Fatalf("textOf(%s) = %q, and of %s %q, %v", data, text, again, t2, err)
			}
			return
		}
		key, kerr := consensus.DefaultKey(json.RawMessage(data))
		if text != key || (err == nil) != (kerr == nil) {
			t.Fatalf("textOf(%s) = %q, %v; its key %q, %v", data, text, err, key, kerr)
		}
	})
}
