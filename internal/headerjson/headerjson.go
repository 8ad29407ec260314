// Package headerjson encodes an HTTP header as JSON byte for byte.
//
// encoding/json writes a string that is not UTF-8 with U+FFFD in place
// of its bad bytes, while a header value may hold any byte an answer was
// sent with (obs-text such as "caf\xe9"). A [Header] writes each value
// that is UTF-8 as the JSON string encoding/json writes for it, and any
// other as an object {"base64": "..."} of its bytes, which no string is;
// it reads both, so that a header written by json.Marshal of an
// http.Header reads as before.
package headerjson

import (
	"encoding/json"
	"net/http"
	"unicode/utf8"
)

// Header is an http.Header whose JSON keeps its values' bytes exactly.
// Its names are written as encoding/json writes map keys: a name that is
// not UTF-8 is not a header name net/http sends.
type Header http.Header

// MarshalJSON implements json.Marshaler.
func (h Header) MarshalJSON() ([]byte, error) {
	if h == nil {
		return []byte("null"), nil
	}
	m := make(map[string][]value, len(h))
	for name, vs := range h {
		if vs == nil {
			m[name] = nil
			continue
		}
		out := make([]value, len(vs))
		for i, v := range vs {
			out[i] = value(v)
		}
		m[name] = out
	}
	return json.Marshal(m)
}

// UnmarshalJSON implements json.Unmarshaler. It reads what MarshalJSON
// writes and what json.Marshal writes of an http.Header.
func (h *Header) UnmarshalJSON(b []byte) error {
	var m map[string][]value
	if err := json.Unmarshal(b, &m); err != nil {
		return err
	}
	if m == nil {
		*h = nil
		return nil
	}
	*h = make(Header, len(m))
	for name, vs := range m {
		if vs == nil {
			(*h)[name] = nil
			continue
		}
		out := make([]string, len(vs))
		for i, v := range vs {
			out[i] = string(v)
		}
		(*h)[name] = out
	}
	return nil
}

// value is one header value: a JSON string when it is UTF-8, an object
// of its bytes otherwise.
type value string

// raw is the JSON of a value that is not UTF-8.
type raw struct {
	Base64 []byte `json:"base64"`
}

func (v value) MarshalJSON() ([]byte, error) {
	if utf8.ValidString(string(v)) {
		return json.Marshal(string(v))
	}
	return json.Marshal(raw{Base64: []byte(v)})
}

func (v *value) UnmarshalJSON(b []byte) error {
	if len(b) > 0 && b[0] == '{' {
		var r raw
		if err := json.Unmarshal(b, &r); err != nil {
			return err
		}
		*v = value(r.Base64)
		return nil
	}
	var s string
	if err := json.Unmarshal(b, &s); err != nil {
		return err
	}
	*v = value(s)
	return nil
}
