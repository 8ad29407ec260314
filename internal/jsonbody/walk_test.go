package jsonbody_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/internal/jsonbody"
	"github.com/vouchkit/vouch/problem"
)

// TestUnmarshal_everyTypeError checks that a body with several values of
// the wrong type names each, where encoding/json reports the first.
func TestUnmarshal_everyTypeError(t *testing.T) {
	var v Outer
	p := asProblem(t, jsonbody.Unmarshal([]byte(`{"id": 5, "count": "5", "items": [{"flag": true}, {"flag": 1}, 3], "by_key": {"a": {"Name": false}}}`), &v))
	want := []problem.FieldError{
		{Field: "by_key.a.Name", Rule: "type", Message: "expected a string, got bool"},
		{Field: "count", Rule: "type", Message: "expected a number, got string"},
		{Field: "id", Rule: "type", Message: "expected a string, got number"},
		{Field: "items[1].flag", Rule: "type", Message: "expected a boolean, got number"},
		{Field: "items[2]", Rule: "type", Message: "expected an object, got number"},
	}
	if diff := cmp.Diff(want, p.Errors); diff != "" {
		t.Errorf("field errors (-want +got):\n%s", diff)
	}
}

// TestUnmarshal_typeErrorsInIndexOrder checks that the errors of an
// array's elements come in the order of their indexes, items[2] before
// items[10], as are the unknown members within them: a problem lists the
// first errors and its detail repeats the first three.
func TestUnmarshal_typeErrorsInIndexOrder(t *testing.T) {
	items := make([]string, 12)
	for i := range items {
		items[i] = "3"
	}
	body := `{"items": [` + strings.Join(items, ",") + `]}`
	var v Outer
	p := asProblem(t, jsonbody.Unmarshal([]byte(body), &v))
	var want, got []string
	for i := range items {
		want = append(want, fmt.Sprintf("items[%d]", i))
	}
	for _, fe := range p.Errors {
		got = append(got, fe.Field)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("fields (-want +got):\n%s", diff)
	}

	unknown, _ := jsonbody.Inspect([]byte(`{"items": [{"x": 1}, {}, {"x": 1}, {}, {}, {}, {}, {}, {}, {}, {"x": 1}]}`), &v)
	got = nil
	for _, fe := range unknown {
		got = append(got, fe.Field)
	}
	if diff := cmp.Diff([]string{"items[0].x", "items[2].x", "items[10].x"}, got); diff != "" {
		t.Errorf("unknown members (-want +got):\n%s", diff)
	}
}

// TestUnmarshal_typeErrorNamesTheField checks that a member written in
// another case than its field's JSON name, which encoding/json accepts,
// is named by the field's name: a path is the wire's, not the input's
// spelling.
func TestUnmarshal_typeErrorNamesTheField(t *testing.T) {
	var v Outer
	p := asProblem(t, jsonbody.Unmarshal([]byte(`{"COUNT": "5", "Items": [{"FLAG": 1}]}`), &v))
	want := []problem.FieldError{
		{Field: "count", Rule: "type", Message: "expected a number, got string"},
		{Field: "items[0].flag", Rule: "type", Message: "expected a boolean, got number"},
	}
	if diff := cmp.Diff(want, p.Errors); diff != "" {
		t.Errorf("field errors (-want +got):\n%s", diff)
	}
}

// options has members that read as absent when zero, and others that do
// not.
type options struct {
	Mode    string   `json:"mode,omitempty"`
	Steps   int      `json:"steps,omitempty"`
	Ratio   float64  `json:"ratio,omitempty"`
	Small   float32  `json:"small,omitempty"`
	Kept    int      `json:"kept"`
	Flag    bool     `json:"flag,omitempty"`
	Pointer *int     `json:"pointer,omitempty"`
	List    []string `json:"list,omitempty"`
	Nested  []struct {
		Size uint `json:"size,omitempty"`
	} `json:"nested"`
}

func TestZeros(t *testing.T) {
	for _, c := range []struct {
		body string
		want []string
	}{
		{`{}`, nil},
		{`{"mode":"x","steps":1,"ratio":0.5}`, nil},
		{`{"mode":"","steps":0,"ratio":0.0}`, []string{"mode", "ratio", "steps"}},
		{`{"ratio":-0e3,"kept":0,"flag":false,"pointer":0,"list":[]}`, []string{"ratio"}},
		{`{"mode":null,"steps":null}`, nil},
		{`{"steps":"0"}`, nil}, // a type error, not a zero
		{`{"nested":[{"size":1},{"size":0}]}`, []string{"nested[1].size"}},
		{`{"MODE":""}`, []string{"mode"}}, // encoding/json matches it to mode
		{`{"ratio":0.` + strings.Repeat("0", 100) + `,"steps":-0}`, []string{"ratio", "steps"}},
		{`{"ratio":0.` + strings.Repeat("0", 100) + `1,"mode":"0"}`, nil},
		// Numbers that underflow a float read as 0, and so as absent.
		{`{"ratio":1e-400,"small":1e-50}`, []string{"ratio", "small"}},
		{`{"ratio":0.` + strings.Repeat("0", 400) + `1,"small":-1E-46}`, []string{"ratio", "small"}},
		{`{"ratio":1e-300,"small":1e-40}`, nil},
	} {
		var got []string
		_, zeros := jsonbody.Inspect([]byte(c.body), &options{})
		for _, m := range zeros {
			got = append(got, m.Path)
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s: zeros (-want +got):\n%s", c.body, diff)
		}
	}
}

// selfDecoded decodes itself through a struct of its own, as a payment
// payload does: a type error inside it names its member.
type selfDecoded struct{ Version int }

func (e *selfDecoded) UnmarshalJSON(data []byte) error {
	var inner struct {
		Version int `json:"version"`
	}
	err := json.Unmarshal(data, &inner)
	e.Version = inner.Version
	return err
}

func TestUnmarshal_typeErrorInsideADecoder(t *testing.T) {
	var v struct {
		Payload selfDecoded `json:"payload"`
	}
	p := asProblem(t, jsonbody.Unmarshal([]byte(`{"payload":{"version":"2"}}`), &v))
	want := []problem.FieldError{{Field: "payload.version", Rule: "type", Message: "expected a number, got string"}}
	if diff := cmp.Diff(want, p.Errors); diff != "" {
		t.Errorf("field errors (-want +got):\n%s", diff)
	}
	var top selfDecoded
	p = asProblem(t, jsonbody.Unmarshal([]byte(`{"version":"2"}`), &top))
	if len(p.Errors) != 1 || p.Errors[0].Field != "version" {
		t.Errorf("field errors %+v, want one naming version", p.Errors)
	}
}

// valueFields holds fields whose decoding errors encoding/json reports as
// errors that name no field: base64, a time's text and ",string".
type valueFields struct {
	Raw    []byte    `json:"raw,omitempty"`
	At     time.Time `json:"at"`
	Amount uint64    `json:"amount,string"`
	Name   string    `json:"name"`
}

// TestUnmarshal_valueErrorNamesItsField: a well-formed body whose only
// bad value is a []byte that is not base64, a time that is not RFC 3339,
// or a ",string" number that is not one, is a 400 invalid_request naming
// the member, as for any other value of the wrong type; not
// "malformed_json: invalid JSON" without a path.
func TestUnmarshal_valueErrorNamesItsField(t *testing.T) {
	for _, tc := range []struct{ body, field, message string }{
		{`{"raw":"not base64!"}`, "raw", "expected a string of base64"},
		{`{"raw":"aGk"}`, "raw", "expected a string of base64"},
		{`{"at":"yesterday"}`, "at", `parsing time "yesterday"`},
		{`{"amount":"five"}`, "amount", "expected a number written as a string, got a string holding none"},
		{`{"amount":5}`, "amount", "expected a number written as a string, got number"},
		{`{"amount":"5.5"}`, "amount", "not a whole number"},
	} {
		p := asProblem(t, jsonbody.Unmarshal([]byte(tc.body), new(valueFields)))
		if p.Status != http.StatusBadRequest || p.Code != problem.CodeInvalidRequest || len(p.Errors) != 1 ||
			p.Errors[0].Field != tc.field || p.Errors[0].Rule != "type" || !strings.Contains(p.Errors[0].Message, tc.message) {
			t.Errorf("Unmarshal(%s) = %v (errors %+v); want 400 invalid_request naming %s with %q", tc.body, p, p.Errors, tc.field, tc.message)
		}
	}
	for _, body := range []string{`{"amount":"5"}`, `{"amount":null}`, `{"raw":"aGk=","at":"2026-01-02T03:04:05Z"}`} {
		if err := jsonbody.Unmarshal([]byte(body), new(valueFields)); err != nil {
			t.Errorf("Unmarshal(%s) = %v, want no error", body, err)
		}
	}
}

// TestUnmarshal_stringOptionIsNoTypeError: a valid ",string" member is
// not listed as a type error when another member has one.
func TestUnmarshal_stringOptionIsNoTypeError(t *testing.T) {
	p := asProblem(t, jsonbody.Unmarshal([]byte(`{"amount":"5","name":1}`), new(valueFields)))
	want := []problem.FieldError{{Field: "name", Rule: "type", Message: "expected a string, got number"}}
	if diff := cmp.Diff(want, p.Errors); diff != "" {
		t.Errorf("field errors (-want +got):\n%s", diff)
	}
}
