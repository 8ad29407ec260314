package embedkey

import (
	"errors"
	"math"
	"testing"
)

// FuzzDecodeEmbeddings feeds the decoder arbitrary replies: it must return
// either n finite, non-zero vectors of one dimension, or an error wrapping
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
			var norm float64
			for _, x := range v {
				norm += x * x
			}
			if norm == 0 || math.IsInf(norm, 0) || math.IsNaN(norm) {
				t.Fatalf("vector %d has norm² %v", i, norm)
			}
			if c := cosine(v, vecs[0]); !(c >= -1 && c <= 1) {
				t.Fatalf("cosine %v outside [-1, 1]", c)
			}
		}
	})
}
