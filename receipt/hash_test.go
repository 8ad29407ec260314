package receipt_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"testing"

	"github.com/vouchkit/vouch/receipt"
)

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return "sha256:" + hex.EncodeToString(h[:])
}

func TestHash(t *testing.T) {
	tests := []struct {
		name  string
		value any
		canon string // the canonical JSON text that must be hashed
	}{
		{"string is hashed with its quotes", "hello", `"hello"`},
		{"escapes are canonical", "a<b>&\u00e9\n", "\"a<b>&\u00e9\\n\""},
		{"object members sorted", map[string]any{"b": 1, "a": []int{2, 1}}, `{"a":[2,1],"b":1}`},
		{"raw JSON re-spelled", json.RawMessage(" { \"z\" : 1.50, \"a\" : 1e2 } "), `{"a":100,"z":1.5}`},
		{"number", 0.1, `0.1`},
		{"whole float", 2.0, `2`},
		{"nil is null", nil, `null`},
		{"struct by its JSON names", struct {
			B string `json:"b"`
			A int    `json:"a"`
		}{"x", 1}, `{"a":1,"b":"x"}`},
	}
	for _, tc := range tests {
		got, err := receipt.Hash(tc.value)
		if err != nil {
			t.Errorf("%s: Hash = %v", tc.name, err)
			continue
		}
		if want := sha(tc.canon); got != want {
			t.Errorf("%s: Hash(%v) = %s, want %s (sha256 of %s)", tc.name, tc.value, got, want, tc.canon)
		}
	}
}

func TestHashJSON_invalid(t *testing.T) {
	for _, in := range []string{``, `{`, `{"a":1,"a":2}`, `[1,]`, "\"\xff\"", `1 2`} {
		if h, err := receipt.HashJSON([]byte(in)); err == nil {
			t.Errorf("HashJSON(%q) = %s, want an error", in, h)
		}
	}
}

func TestHash_unencodable(t *testing.T) {
	if _, err := receipt.Hash(func() {}); err == nil {
		t.Error("Hash(func) = nil error, want one")
	}
}
