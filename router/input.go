package router

import (
	"bytes"
	"encoding/json"
	"fmt"
	"reflect"
)

// InputKind tells which of its three forms an [Input] holds.
type InputKind string

// The forms of a delegate v2 input.
const (
	InputNone   InputKind = ""       // absent
	InputObject InputKind = "object" // a JSON object
	InputString InputKind = "string" // a JSON string
	InputArray  InputKind = "array"  // {"kind":"array","items":[...]}
)

// Input is the input of a delegate v2 request: a JSON object, a JSON
// string, or the array form, an object with "kind":"array" and "items". It
// keeps the JSON it was decoded from, so it re-encodes to the same value.
// The zero Input is absent and encodes as null.
type Input struct {
	raw  json.RawMessage
	kind InputKind
}

// NewStringInput returns a string input.
func NewStringInput(s string) Input {
	raw, _ := json.Marshal(s) // a string always encodes
	return Input{raw: raw, kind: InputString}
}

// NewObjectInput returns an object input from any value that encodes as a
// JSON object, such as a map or a struct.
func NewObjectInput(v any) (Input, error) {
	raw, err := json.Marshal(v)
	if err != nil {
		return Input{}, fmt.Errorf("router: encoding object input: %w", err)
	}
	var in Input
	if err := in.UnmarshalJSON(raw); err != nil {
		return Input{}, err
	}
	if in.kind != InputObject {
		return Input{}, fmt.Errorf("router: object input: %T does not encode as a JSON object", v)
	}
	return in, nil
}

// NewArrayInput returns the array form holding items.
func NewArrayInput(items ...any) (Input, error) {
	if items == nil {
		items = []any{}
	}
	raw, err := json.Marshal(arrayForm{Kind: "array", Items: items})
	if err != nil {
		return Input{}, fmt.Errorf("router: encoding array input: %w", err)
	}
	return Input{raw: raw, kind: InputArray}, nil
}

type arrayForm struct {
	Kind  string `json:"kind"`
	Items any    `json:"items"`
}

// Kind reports the form of the input.
func (in Input) Kind() InputKind { return in.kind }

// Raw returns the input's JSON, or nil when it is absent. The caller must
// not modify it.
func (in Input) Raw() json.RawMessage { return in.raw }

// String returns the text of a string input; ok is false for other forms.
func (in Input) String() (s string, ok bool) {
	if in.kind != InputString {
		return "", false
	}
	err := json.Unmarshal(in.raw, &s)
	return s, err == nil
}

// Object returns the members of an object input; ok is false for other
// forms. The array form is an object too, but reports ok false here.
func (in Input) Object() (members map[string]json.RawMessage, ok bool) {
	if in.kind != InputObject {
		return nil, false
	}
	err := json.Unmarshal(in.raw, &members)
	return members, err == nil
}

// Items returns the items of the array form; ok is false for other forms.
func (in Input) Items() (items []json.RawMessage, ok bool) {
	if in.kind != InputArray {
		return nil, false
	}
	var members map[string]json.RawMessage
	if json.Unmarshal(in.raw, &members) != nil || json.Unmarshal(members["items"], &items) != nil {
		return nil, false
	}
	if items == nil {
		items = []json.RawMessage{}
	}
	return items, true
}

// IsZero reports whether the input is absent.
func (in Input) IsZero() bool { return in.kind == InputNone }

// MarshalJSON returns the input's JSON unchanged, or null when absent.
func (in Input) MarshalJSON() ([]byte, error) {
	if in.kind == InputNone {
		return []byte("null"), nil
	}
	return in.raw, nil
}

// UnmarshalJSON accepts a JSON object, a JSON string, or the array form. An
// object whose "kind" is "array" must carry an "items" array. A bare JSON
// array, a number, a boolean are rejected; null leaves the input absent.
func (in *Input) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	bad := func(what string) error {
		return &json.UnmarshalTypeError{Value: what, Type: reflect.TypeFor[Input]()}
	}
	if len(data) == 0 {
		return bad("nothing")
	}
	switch data[0] {
	case 'n':
		*in = Input{}
		return nil
	case '"':
		var s string
		if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		*in = Input{raw: bytes.Clone(data), kind: InputString}
		return nil
	case '{':
		// A map matches member names exactly; a struct would also take
		// "Kind" or "ITEMS", which are ordinary members of an object input.
		var probe map[string]json.RawMessage
		if err := json.Unmarshal(data, &probe); err != nil {
			return err
		}
		var k string
		kind := InputObject
		if json.Unmarshal(probe["kind"], &k) == nil && k == "array" {
			items := bytes.TrimSpace(probe["items"])
			if len(items) == 0 || items[0] != '[' {
				return bad(`an array form without an "items" array`)
			}
			kind = InputArray
		}
		*in = Input{raw: bytes.Clone(data), kind: kind}
		return nil
	case '[':
		return bad("a bare array")
	default:
		return bad("a number or boolean")
	}
}
