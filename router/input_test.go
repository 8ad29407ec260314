package router_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/vouchkit/vouch/internal/jsonbody"
	"github.com/vouchkit/vouch/router"
)

// TestInput_forms decodes each form of input inside a delegate v2 request,
// checks its kind and accessors, and checks that it encodes to the same
// JSON value it was decoded from.
func TestInput_forms(t *testing.T) {
	tests := []struct {
		name    string
		input   string
		kind    router.InputKind
		str     string            // String, when kind is string
		members []string          // Object's member names, when kind is object
		items   []json.RawMessage // Items, when kind is array
	}{
		{name: "object", input: `{"text": "hello", "n": 1.50, "nested": {"a": [1, 2]}}`, kind: router.InputObject, members: []string{"n", "nested", "text"}},
		{name: "empty object", input: `{}`, kind: router.InputObject, members: []string{}},
		{name: "object with kind other than array", input: `{"kind": "table", "items": 3}`, kind: router.InputObject, members: []string{"items", "kind"}},
		{name: "string", input: `"summarize <this> & that \u00e9"`, kind: router.InputString, str: "summarize <this> & that é"},
		{name: "empty string", input: `""`, kind: router.InputString, str: ""},
		{name: "array form", input: `{"kind": "array", "items": ["a", {"b": 2}, 3.0, null]}`, kind: router.InputArray,
			items: []json.RawMessage{raw(`"a"`), raw(`{"b": 2}`), raw(`3.0`), raw(`null`)}},
		{name: "array form, no items", input: `{"items": [], "kind": "array"}`, kind: router.InputArray, items: []json.RawMessage{}},
		{name: "array form with more members", input: `{"kind": "array", "items": [1], "note": "x"}`, kind: router.InputArray, items: []json.RawMessage{raw(`1`)}},
		// Member names match exactly, as JSON writes them.
		{name: "object with Kind", input: `{"Kind": "array", "note": 1}`, kind: router.InputObject, members: []string{"Kind", "note"}},
		{name: "object with non-string kind", input: `{"kind": 1, "items": [1]}`, kind: router.InputObject, members: []string{"items", "kind"}},
		{name: "array form, escaped kind", input: `{"kind": "arr\u0061y", "items": [true]}`, kind: router.InputArray, items: []json.RawMessage{raw(`true`)}},
		{name: "array form beside Items", input: `{"kind": "array", "items": [1], "Items": [2, 3]}`, kind: router.InputArray, items: []json.RawMessage{raw(`1`)}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := `{"session_id": 1, "objective": "o", "input": ` + tc.input + `}`
			var req router.DelegateV2Request
			if err := jsonbody.Unmarshal([]byte(body), &req); err != nil {
				t.Fatal(err)
			}
			in := req.Input
			if in.Kind() != tc.kind {
				t.Errorf("Kind() = %q, want %q", in.Kind(), tc.kind)
			}
			if in.IsZero() {
				t.Error("IsZero() = true for a present input")
			}
			if !jsonEqual(in.Raw(), []byte(tc.input)) {
				t.Errorf("Raw() = %s, want the JSON value %s", in.Raw(), tc.input)
			}

			s, ok := in.String()
			if ok != (tc.kind == router.InputString) || s != tc.str {
				t.Errorf("String() = %q, %v; want %q, %v", s, ok, tc.str, tc.kind == router.InputString)
			}
			members, ok := in.Object()
			if ok != (tc.kind == router.InputObject) {
				t.Errorf("Object() ok = %v, want %v", ok, tc.kind == router.InputObject)
			}
			if tc.kind == router.InputObject {
				names := make([]string, 0, len(members))
				for k := range members {
					names = append(names, k)
				}
				if diff := cmp.Diff(tc.members, names, sortStrings); diff != "" {
					t.Errorf("Object() member names (-want +got):\n%s", diff)
				}
			}
			items, ok := in.Items()
			if ok != (tc.kind == router.InputArray) {
				t.Errorf("Items() ok = %v, want %v", ok, tc.kind == router.InputArray)
			}
			if diff := cmp.Diff(tc.items, items, wireOpts); tc.kind == router.InputArray && diff != "" {
				t.Errorf("Items() (-want +got):\n%s", diff)
			}
			if tc.kind == router.InputArray && items == nil {
				t.Error("Items() = nil for an array form; want a non-nil empty slice")
			}

			// Round trip: as a value on its own and inside the request.
			enc, err := json.Marshal(in)
			if err != nil {
				t.Fatal(err)
			}
			if !jsonEqual(enc, []byte(tc.input)) {
				t.Errorf("encoded %s, want the JSON value %s", enc, tc.input)
			}
			var back router.DelegateV2Request
			reqEnc, err := json.Marshal(req)
			if err != nil {
				t.Fatal(err)
			}
			if err := jsonbody.Unmarshal(reqEnc, &back); err != nil {
				t.Fatal(err)
			}
			if back.Input.Kind() != tc.kind || !jsonEqual(back.Input.Raw(), []byte(tc.input)) {
				t.Errorf("after a round trip: kind %q raw %s; want %q %s", back.Input.Kind(), back.Input.Raw(), tc.kind, tc.input)
			}
		})
	}
}

var sortStrings = cmpopts.SortSlices(func(a, b string) bool { return a < b })

// TestInput_absent checks that a missing or null input is the zero Input,
// which encodes as null and answers no accessor.
func TestInput_absent(t *testing.T) {
	for _, body := range []string{
		`{"session_id": 1, "objective": "o"}`,
		`{"session_id": 1, "objective": "o", "input": null}`,
	} {
		var req router.DelegateV2Request
		if err := jsonbody.Unmarshal([]byte(body), &req); err != nil {
			t.Fatalf("%s: %v", body, err)
		}
		in := req.Input
		if !in.IsZero() || in.Kind() != router.InputNone || in.Raw() != nil {
			t.Errorf("%s: IsZero %v, Kind %q, Raw %s; want true, \"\", nil", body, in.IsZero(), in.Kind(), in.Raw())
		}
		if _, ok := in.String(); ok {
			t.Errorf("%s: String() ok for an absent input", body)
		}
		if _, ok := in.Object(); ok {
			t.Errorf("%s: Object() ok for an absent input", body)
		}
		if _, ok := in.Items(); ok {
			t.Errorf("%s: Items() ok for an absent input", body)
		}
		enc, err := json.Marshal(in)
		if err != nil || string(enc) != "null" {
			t.Errorf("%s: encoded %s, %v; want null", body, enc, err)
		}
	}
}

// TestInput_rejected checks that the forms the spec does not allow give a
// 400 naming the input field.
func TestInput_rejected(t *testing.T) {
	for _, input := range []string{
		`[1, 2, 3]`,
		`[]`,
		`42`,
		`-1.5e3`,
		`true`,
		`false`,
		`{"kind": "array"}`,
		`{"kind": "array", "items": null}`,
		`{"kind": "array", "items": "abc"}`,
		`{"kind": "array", "items": {"0": 1}}`,
		`{"kind": "array", "ITEMS": [1]}`,
	} {
		t.Run(input, func(t *testing.T) {
			body := `{"session_id": 1, "objective": "o", "input": ` + input + `}`
			for _, v := range []any{new(router.DelegateV2Request), new(router.DelegateV3Request)} {
				err := jsonbody.Unmarshal([]byte(body), v)
				if diff := cmp.Diff([]fieldRule{{"input", "type"}}, fieldRules(t, err)); diff != "" {
					t.Errorf("%T: field errors (-want +got):\n%s", v, diff)
				}
			}
		})
	}
}

// TestInput_constructors checks that the constructors build the forms the
// decoder recognises.
func TestInput_constructors(t *testing.T) {
	s := router.NewStringInput(`say "hi"`)
	if got, ok := s.String(); !ok || got != `say "hi"` || s.Kind() != router.InputString {
		t.Errorf("NewStringInput: String() = %q, %v, Kind %q", got, ok, s.Kind())
	}

	obj, err := router.NewObjectInput(map[string]int{"a": 1})
	if err != nil {
		t.Fatal(err)
	}
	if m, ok := obj.Object(); !ok || !jsonEqual(m["a"], []byte("1")) {
		t.Errorf("NewObjectInput: Object() = %v, %v", m, ok)
	}
	if _, err := router.NewObjectInput([]int{1}); err == nil {
		t.Error("NewObjectInput(slice): no error")
	}
	if _, err := router.NewObjectInput("text"); err == nil {
		t.Error("NewObjectInput(string): no error")
	}
	if _, err := router.NewObjectInput(func() {}); err == nil {
		t.Error("NewObjectInput(func): no error")
	}
	// A map with kind "array" is the array form, not an object.
	if in, err := router.NewObjectInput(map[string]any{"kind": "array", "items": []int{1}}); err == nil {
		t.Errorf("NewObjectInput(array form) = kind %q, want an error", in.Kind())
	}

	arr, err := router.NewArrayInput("a", 2)
	if err != nil {
		t.Fatal(err)
	}
	items, ok := arr.Items()
	if diff := cmp.Diff([]json.RawMessage{raw(`"a"`), raw(`2`)}, items, wireOpts); !ok || diff != "" {
		t.Errorf("NewArrayInput: Items() ok %v (-want +got):\n%s", ok, diff)
	}
	empty, err := router.NewArrayInput()
	if err != nil {
		t.Fatal(err)
	}
	if !jsonEqual(empty.Raw(), []byte(`{"kind":"array","items":[]}`)) {
		t.Errorf("NewArrayInput() = %s, want an empty array form", empty.Raw())
	}
	if _, err := router.NewArrayInput(make(chan int)); err == nil {
		t.Error("NewArrayInput(chan): no error")
	}
	// Constructed inputs decode to the same kind.
	for _, in := range []router.Input{s, obj, arr, empty} {
		enc, err := json.Marshal(in)
		if err != nil {
			t.Fatal(err)
		}
		var back router.Input
		if err := json.Unmarshal(enc, &back); err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(in, back, wireOpts); diff != "" {
			t.Errorf("decode(encode(%s)) (-want +got):\n%s", enc, diff)
		}
	}
}
