package consensus_test

import (
	"encoding/json"
	"math"
	"testing"

	"github.com/vouchkit/vouch/consensus"
)

func TestDefaultKey(t *testing.T) {
	tests := []struct {
		name string
		a, b any
		same bool
	}{
		{"surrounding white space", "yes", " yes\n", true},
		{"runs of white space", "a  b\t\tc", "a b c", true},
		{"space is not nothing", "a b", "ab", false},
		{"case matters", "Yes", "yes", false},
		{"key order", json.RawMessage(`{"a":1,"b":2}`), json.RawMessage(`{"b":2,"a":1}`), true},
		{"map and raw JSON", map[string]any{"a": []any{"x"}}, json.RawMessage(` { "a" : [ "x " ] } `), true},
		{"struct and map", struct {
			N int `json:"n"`
		}{3}, map[string]int{"n": 3}, true},
		{"nested strings folded", json.RawMessage(`{"a":{"b":["  p  q "]}}`), json.RawMessage(`{"a":{"b":["p q"]}}`), true},
		{"object keys not folded", json.RawMessage(`{"a b":1}`), json.RawMessage(`{"a  b":1}`), false},
		{"number forms", json.RawMessage(`[1, 1.0, 1e0, 10]`), []float64{1, 1, 1, 10}, true},
		{"number and string", json.RawMessage(`{"a":1}`), json.RawMessage(`{"a":"1"}`), false},
		{"array order", []int{1, 2}, []int{2, 1}, false},
		{"nil and JSON null", nil, json.RawMessage(`null`), true},
		{"nil and empty string", nil, "", false},
		{"HTML characters", "<a&b>", json.RawMessage(`"\u003ca\u0026b\u003e"`), true},
		{"negative zero", json.RawMessage(`-0`), json.RawMessage(`0`), true},
		{"negative zero in an object", json.RawMessage(`{"a":-0.0}`), map[string]float64{"a": 0}, true},
		{"a Go negative zero", math.Copysign(0, -1), 0, true},
		{"beyond a double, as written", json.RawMessage(`[1e400]`), json.RawMessage(` [ 1e400 ] `), true},
		{"beyond a double, not the largest double", json.RawMessage(`1e400`), json.RawMessage(`1.7976931348623157e308`), false},
		{"beyond a double, the other sign", json.RawMessage(`{"x":1e400}`), json.RawMessage(`{"x":-1e400}`), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			ka, err := consensus.DefaultKey(tt.a)
			if err != nil {
				t.Fatal(err)
			}
			kb, err := consensus.DefaultKey(tt.b)
			if err != nil {
				t.Fatal(err)
			}
			if (ka == kb) != tt.same {
				t.Errorf("keys %q and %q: equal = %t, want %t", ka, kb, ka == kb, tt.same)
			}
		})
	}
}

func TestDefaultKey_errors(t *testing.T) {
	for _, a := range []any{make(chan int), func() {}, json.RawMessage(`{"a":`)} {
		if k, err := consensus.DefaultKey(a); err == nil {
			t.Errorf("DefaultKey(%T) = %q, nil; want an error", a, k)
		}
	}
}
