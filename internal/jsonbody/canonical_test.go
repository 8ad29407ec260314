package jsonbody_test

import (
	"testing"

	"github.com/vouchkit/vouch/internal/jsonbody"
)

func TestCanonical(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		ok       bool
	}{
		{`{"b":1,"a":[2,{"d":"x","c":null}]}`, `{"a":[2,{"c":null,"d":"x"}],"b":1}`, true},
		{" {\n \"a\" : \"\\u0041<&>\" } ", `{"a":"A<&>"}`, true},
		{`{"a":1.50,"b":1e3}`, `{"a":1.50,"b":1e3}`, true},
		{`{"a":1,"a":2}`, `{"a":2}`, true},
		{`"s"`, `"s"`, true},
		{``, ``, false},
		{`{"a":1} {}`, `{"a":1} {}`, false},
		{`{"a":}`, `{"a":}`, false},
	} {
		got, ok := jsonbody.Canonical([]byte(tc.in))
		if string(got) != tc.want || ok != tc.ok {
			t.Errorf("Canonical(%q) = %q, %v; want %q, %v", tc.in, got, ok, tc.want, tc.ok)
		}
	}
}
