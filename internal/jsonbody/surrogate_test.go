package jsonbody_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/internal/jsonbody"
	"github.com/vouchkit/vouch/problem"
)

// TestUnmarshal_loneSurrogate checks that a string escaping a UTF-16
// surrogate that is not half of a pair is refused, naming the string's
// path, rather than replaced by U+FFFD; pairs and other escapes pass.
func TestUnmarshal_loneSurrogate(t *testing.T) {
	lone := func(field, what, escape string) *problem.FieldError {
		return &problem.FieldError{Field: field, Rule: "unicode",
			Message: what + " the lone UTF-16 surrogate " + escape + ", which is no character: send text as UTF-8 or as a surrogate pair"}
	}
	tests := []struct {
		body string
		want *problem.FieldError // nil: accepted
	}{
		{`{"a":"x\ud800"}`, lone("a", "holds", `\ud800`)},
		{`{"a":"\udc00x"}`, lone("a", "holds", `\udc00`)},            // a low half first
		{`{"a":"\uDBFF\u0041"}`, lone("a", "holds", `\uDBFF`)},       // a high half before no low one
		{`{"a":"\ud800\ud800\udc00"}`, lone("a", "holds", `\ud800`)}, // the first of two high halves
		{`{"a":"\ud83d\ude00\ud800"}`, lone("a", "holds", `\ud800`)}, // after a pair
		{`{"a":"\\ud800"}`, nil},                                     // an escaped backslash, then text
		{`{"a":"\\\ud800"}`, lone("a", "holds", `\ud800`)},
		{`{"a":{"b":[1,"\ud800"]}}`, lone("a.b[1]", "holds", `\ud800`)},
		{`[{"k":"v"},{"k":["\udfff"]}]`, lone("[1].k[0]", "holds", `\udfff`)},
		{`"\ud800"`, lone("(body)", "holds", `\ud800`)},
		{`{"a":{"n\ud800":1}}`, lone("a", "has a member name that holds", `\ud800`)},
		{`{"n\ud800":1}`, lone("(body)", "has a member name that holds", `\ud800`)},
		{`{"a":"\ud83d\ude00 \u00e9 \u0000 \u202e \n"}`, nil},
		{`{"a":"\uD83D\uDE00"}`, nil}, // upper-case hex
		{`{"a":"\uffff\ue000\ud7ff"}`, nil},
	}
	for _, tt := range tests {
		var v any
		err := jsonbody.Unmarshal([]byte(tt.body), &v)
		if tt.want == nil {
			if err != nil {
				t.Errorf("%s: %v, want accepted", tt.body, err)
			}
			continue
		}
		p := asProblem(t, err)
		if p.Status != 400 || p.Code != problem.CodeInvalidRequest {
			t.Errorf("%s: %d %s, want 400 %s", tt.body, p.Status, p.Code, problem.CodeInvalidRequest)
		}
		if diff := cmp.Diff([]problem.FieldError{*tt.want}, p.Errors); diff != "" {
			t.Errorf("%s: field errors (-want +got):\n%s", tt.body, diff)
		}
	}
}

// TestUnmarshal_loneSurrogateRaw: a json.RawMessage member, kept as
// written, is checked as well.
func TestUnmarshal_loneSurrogateRaw(t *testing.T) {
	var v struct {
		Claim json.RawMessage `json:"claim"`
	}
	p := asProblem(t, jsonbody.Unmarshal([]byte(`{"claim":{"text":"x\ud800"}}`), &v))
	if len(p.Errors) != 1 || p.Errors[0].Field != "claim.text" {
		t.Errorf("field errors %+v, want one on claim.text", p.Errors)
	}
}
