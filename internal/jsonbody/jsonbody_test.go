package jsonbody_test

import (
	"encoding/json"
	"errors"
	"io"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/internal/jsonbody"
	"github.com/vouchkit/vouch/problem"
)

func asProblem(t *testing.T, err error) *problem.Details {
	t.Helper()
	var p *problem.Details
	if !errors.As(err, &p) {
		t.Fatalf("error %v (%T) is not a *problem.Details", err, err)
	}
	return p
}

// TestDecode_limit checks the limit to the byte: a body of exactly limit
// bytes decodes, one byte more is a 413.
func TestDecode_limit(t *testing.T) {
	const limit = 32
	fits := `{"s":"` + strings.Repeat("x", limit-8) + `"}`
	if len(fits) != limit {
		t.Fatalf("test body is %d bytes, want %d", len(fits), limit)
	}
	var v struct{ S string }
	if err := jsonbody.Decode(strings.NewReader(fits), limit, &v); err != nil {
		t.Errorf("body of exactly the limit: %v", err)
	}
	if v.S != strings.Repeat("x", limit-8) {
		t.Errorf("decoded %q", v.S)
	}

	tooBig := fits + " "
	err := jsonbody.Decode(strings.NewReader(tooBig), limit, &v)
	p := asProblem(t, err)
	if p.Status != 413 || p.Code != problem.CodeBodyTooLarge {
		t.Errorf("limit+1 bytes: %d %s, want 413 %s", p.Status, p.Code, problem.CodeBodyTooLarge)
	}
	if !strings.Contains(p.Detail, "32 bytes") {
		t.Errorf("detail %q does not name the limit", p.Detail)
	}
}

// TestDecode_defaultLimit checks that a limit of zero or less means
// DefaultLimit.
func TestDecode_defaultLimit(t *testing.T) {
	body := func(n int) io.Reader { return strings.NewReader(`"` + strings.Repeat("x", n-2) + `"`) }
	for _, limit := range []int64{0, -1} {
		var s string
		if err := jsonbody.Decode(body(jsonbody.DefaultLimit), limit, &s); err != nil {
			t.Errorf("limit %d, body of DefaultLimit bytes: %v", limit, err)
		}
		err := jsonbody.Decode(body(jsonbody.DefaultLimit+1), limit, &s)
		if p := asProblem(t, err); p.Status != 413 {
			t.Errorf("limit %d, body of DefaultLimit+1 bytes: status %d, want 413", limit, p.Status)
		}
	}
}

// TestDecode_stopsReading checks that Decode does not read much past the
// limit of an endless body.
func TestDecode_stopsReading(t *testing.T) {
	r := &countingReader{}
	var v any
	err := jsonbody.Decode(r, 100, &v)
	if p := asProblem(t, err); p.Status != 413 {
		t.Errorf("status %d, want 413", p.Status)
	}
	if r.n > 101+512 {
		t.Errorf("read %d bytes of an endless body with limit 100", r.n)
	}
}

type countingReader struct{ n int }

func (r *countingReader) Read(b []byte) (int, error) {
	for i := range b {
		b[i] = ' '
	}
	r.n += len(b)
	return len(b), nil
}

type failingReader struct{}

func (failingReader) Read([]byte) (int, error) { return 0, errors.New("connection reset") }

func TestDecode_readError(t *testing.T) {
	var v any
	p := asProblem(t, jsonbody.Decode(failingReader{}, 0, &v))
	if p.Status != 400 || p.Code != problem.CodeMalformedJSON || !strings.Contains(p.Detail, "connection reset") {
		t.Errorf("got %d %s %q", p.Status, p.Code, p.Detail)
	}
}

// TestUnmarshal_malformed checks the errors for bodies that are not one
// JSON value. Offsets count from 0 and point at the first wrong byte.
func TestUnmarshal_malformed(t *testing.T) {
	tests := []struct {
		body   string
		detail string
	}{
		{``, "body is empty"},
		{"  \r\n\t", "body is empty"},
		{`{"a":1,}`, "byte offset 7"},
		{`{"a" 1}`, "byte offset 5"},
		{`{"a":01}`, "byte offset 6"},
		{`nul`, "ends before the value"},
		{`{"a":[1,2`, "ends before the value"},
		{`{"a":1}}`, "after the JSON value at byte offset 7"},
		{`{"a":1}` + "\n\n  " + `{"a":2}`, "after the JSON value at byte offset 11"},
		{`{"a":1} x`, "after the JSON value at byte offset 8"},
		{`{} 2`, "after the JSON value at byte offset 3"},
	}
	for _, tc := range tests {
		var v map[string]any
		p := asProblem(t, jsonbody.Unmarshal([]byte(tc.body), &v))
		if p.Status != 400 || p.Code != problem.CodeMalformedJSON {
			t.Errorf("%q: %d %s, want 400 %s", tc.body, p.Status, p.Code, problem.CodeMalformedJSON)
		}
		if !strings.Contains(p.Detail, tc.detail) {
			t.Errorf("%q: detail %q does not contain %q", tc.body, p.Detail, tc.detail)
		}
	}
}

// TestUnmarshal_trailingSpace checks that white space after the value is
// not trailing data.
func TestUnmarshal_trailingSpace(t *testing.T) {
	var v map[string]int
	if err := jsonbody.Unmarshal([]byte("{\"a\":1} \r\n\t"), &v); err != nil {
		t.Fatal(err)
	}
	if v["a"] != 1 {
		t.Errorf("decoded %v", v)
	}
}

// Inner is embedded without a JSON name, so encoding/json promotes its
// members to the outer object.
type Inner struct {
	Count int    `json:"count"`
	Deep  *Leaf  `json:"deep"`
	Items []Leaf `json:"items"`
}

type Leaf struct {
	Flag bool `json:"flag"`
	Name string
}

type Named struct {
	Value int `json:"value"`
}

type Outer struct {
	ID string `json:"id"`
	Inner
	*Named
	Tagged Inner           `json:"tagged"`
	ByKey  map[string]Leaf `json:"by_key"`
}

// TestUnmarshal_typeErrors checks that a value of the wrong type is named
// by its JSON path: members of embedded structs appear as encoding/json
// promotes them, without the Go type's name.
func TestUnmarshal_typeErrors(t *testing.T) {
	tests := []struct {
		body    string
		field   string
		message string
	}{
		{`{"id": 5}`, "id", "expected a string, got number"},
		{`{"count": "5"}`, "count", "expected a number, got string"},
		{`{"count": 1.5}`, "count", "number 1.5 is out of range or not a whole number for this field"},
		{`{"count": 1e400}`, "count", "out of range"},
		{`{"deep": {"flag": "yes"}}`, "deep.flag", "expected a boolean, got string"},
		{`{"deep": {"Name": 1}}`, "deep.Name", "expected a string, got number"},
		{`{"items": [{"flag": true}, {"flag": 1}]}`, "items[1].flag", "expected a boolean, got number"},
		{`{"items": {"flag": true}}`, "items", "expected an array, got object"},
		{`{"value": "x"}`, "value", "expected a number, got string"},
		{`{"tagged": {"deep": {"flag": 0}}}`, "tagged.deep.flag", "expected a boolean, got number"},
		{`{"by_key": []}`, "by_key", "expected an object, got array"},
		{`[1]`, "(body)", "expected an object, got array"},
		{`"text"`, "(body)", "expected an object, got string"},
	}
	for _, tc := range tests {
		var v Outer
		p := asProblem(t, jsonbody.Unmarshal([]byte(tc.body), &v))
		if p.Status != 400 || p.Code != problem.CodeInvalidRequest {
			t.Errorf("%s: %d %s, want 400 %s", tc.body, p.Status, p.Code, problem.CodeInvalidRequest)
			continue
		}
		if len(p.Errors) != 1 {
			t.Errorf("%s: %d field errors, want 1: %+v", tc.body, len(p.Errors), p.Errors)
			continue
		}
		fe := p.Errors[0]
		if fe.Field != tc.field || fe.Rule != "type" || !strings.Contains(fe.Message, tc.message) {
			t.Errorf("%s: field error %+v, want field %q rule type message containing %q", tc.body, fe, tc.field, tc.message)
		}
	}
}

// SessionID rejects every value with a *json.UnmarshalTypeError, as the
// package doc asks of custom decoders; its name selects a message.
type SessionID int

func (*SessionID) UnmarshalJSON(data []byte) error {
	return &json.UnmarshalTypeError{Value: string(data), Type: reflect.TypeFor[SessionID]()}
}

// problemType rejects every value with a problem of its own.
type problemType struct{}

func (*problemType) UnmarshalJSON([]byte) error {
	return problem.New(422, problem.CodeUnprocessable, "not this one")
}

func TestUnmarshal_customDecoders(t *testing.T) {
	var v struct {
		Pool []SessionID `json:"session_pool"`
	}
	p := asProblem(t, jsonbody.Unmarshal([]byte(`{"session_pool": [1, "x"]}`), &v))
	want := []problem.FieldError{
		{Field: "session_pool[0]", Rule: "type", Message: "expected a positive integer or a string of digits, got 1"},
		{Field: "session_pool[1]", Rule: "type", Message: `expected a positive integer or a string of digits, got "x"`},
	}
	if diff := cmp.Diff(want, p.Errors); diff != "" {
		t.Errorf("field errors (-want +got):\n%s", diff)
	}

	var w struct {
		P problemType `json:"p"`
	}
	p = asProblem(t, jsonbody.Unmarshal([]byte(`{"p": 1}`), &w))
	if p.Status != 422 || p.Detail != "not this one" {
		t.Errorf("a decoder's own problem was not passed through: %v", p)
	}
}

// TestUnmarshal_forwardCompatible checks that unknown members are ignored
// and that numbers in untyped values keep their text.
func TestUnmarshal_forwardCompatible(t *testing.T) {
	var v struct {
		ID    string         `json:"id"`
		Extra map[string]any `json:"extra"`
	}
	body := `{"id": "a", "later_field": {"x": [1]}, "extra": {"big": 12345678901234567890, "f": 1.50}}`
	if err := jsonbody.Unmarshal([]byte(body), &v); err != nil {
		t.Fatal(err)
	}
	want := map[string]any{"big": json.Number("12345678901234567890"), "f": json.Number("1.50")}
	if v.ID != "a" {
		t.Errorf("id = %q", v.ID)
	}
	if diff := cmp.Diff(want, v.Extra); diff != "" {
		t.Errorf("extra (-want +got):\n%s", diff)
	}
}

// FuzzUnmarshal checks that any body gives a value or a 400/413 problem,
// never a panic, and that every field error names a JSON path. Its seeds
// are in testdata/fuzz/FuzzUnmarshal.
func FuzzUnmarshal(f *testing.F) {
	f.Fuzz(func(t *testing.T, body []byte) {
		var v Outer
		err := jsonbody.Decode(strings.NewReader(string(body)), 1024, &v)
		if err == nil {
			return
		}
		p := asProblem(t, err)
		switch p.Code {
		case problem.CodeMalformedJSON, problem.CodeBodyTooLarge:
		case problem.CodeInvalidRequest:
			if len(p.Errors) == 0 {
				t.Fatalf("invalid request without a field error: %v", p)
			}
			for _, fe := range p.Errors {
				if fe.Field == "" || strings.Contains(fe.Field, "Inner") || strings.Contains(fe.Field, "Named") {
					t.Fatalf("field error without a JSON path: %+v", p.Errors)
				}
			}
		default:
			t.Fatalf("unexpected problem %v", p)
		}
	})
}
