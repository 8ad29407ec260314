package jsonbody_test

import (
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/internal/jsonbody"
	"github.com/vouchkit/vouch/problem"
)

// TestUnmarshal_duplicateMembers checks that a repeated member name is a
// 400 naming its JSON path, wherever it is, and that the same name in
// different objects, or spelled with escapes, is told apart correctly.
func TestUnmarshal_duplicateMembers(t *testing.T) {
	tests := []struct {
		body  string
		field string // "" for no error
	}{
		{`{"a":1,"a":2}`, "a"},
		{`{"a":1,"b":{"c":1,"c":2}}`, "b.c"},
		{`{"a":[{"x":1},{"y":1,"y":2}]}`, "a[1].y"},
		{`[{"k":1},{"k":1,"k":1}]`, "[1].k"},
		{`{"a":1,"\u0061":2}`, "a"},                // the same name, escaped
		{`{"a":{"a":1},"b":{"a":1}}`, ""},          // one name in separate objects
		{`{"a":"a","b":"a"}`, ""},                  // equal values are not names
		{`{"a\"b":1,"a\\b":2}`, ""},                // different names with escapes
		{`{"s":"{\"a\":1,\"a\":2}"}`, ""},          // JSON inside a string is text
		{`{"a":[1,2,3],"b":[{"c":1}],"c":{}}`, ""}, // a value's "c" is no member of the outer object
	}
	for _, tt := range tests {
		var v any
		err := jsonbody.Unmarshal([]byte(tt.body), &v)
		if tt.field == "" {
			if err != nil {
				t.Errorf("%s: %v, want no error", tt.body, err)
			}
			continue
		}
		p := asProblem(t, err)
		if p.Status != 400 || p.Code != problem.CodeInvalidRequest {
			t.Errorf("%s: %d %s, want 400 %s", tt.body, p.Status, p.Code, problem.CodeInvalidRequest)
		}
		if len(p.Errors) != 1 {
			t.Fatalf("%s: field errors %+v, want one", tt.body, p.Errors)
		}
		got := p.Errors[0]
		got.Message = ""
		if diff := cmp.Diff(problem.FieldError{Field: tt.field, Rule: "unique"}, got); diff != "" {
			t.Errorf("%s: field error (-want +got):\n%s", tt.body, diff)
		}
	}
}

// TestUnmarshal_depth checks the nesting limit to the level, for objects
// and arrays alike, and that the error names the offset of the first
// value too deep however deep the body goes (encoding/json stops at a
// limit of its own).
func TestUnmarshal_depth(t *testing.T) {
	nest := func(open, close string, n int) string {
		return strings.Repeat(open, n) + "1" + strings.Repeat(close, n)
	}
	for _, tt := range []struct{ open, close string }{{"[", "]"}, {`{"a":`, "}"}} {
		var v any
		if err := jsonbody.Unmarshal([]byte(nest(tt.open, tt.close, jsonbody.MaxDepth)), &v); err != nil {
			t.Errorf("%s nested %d deep: %v, want accepted", tt.open, jsonbody.MaxDepth, err)
		}
		for _, n := range []int{jsonbody.MaxDepth + 1, 20000} {
			p := asProblem(t, jsonbody.Unmarshal([]byte(nest(tt.open, tt.close, n)), &v))
			want := fmt.Sprintf("JSON nested deeper than %d levels at byte offset %d", jsonbody.MaxDepth, jsonbody.MaxDepth*len(tt.open))
			if p.Status != 400 || p.Code != problem.CodeMalformedJSON || p.Detail != want {
				t.Errorf("%s nested %d deep: %d %s %q, want 400 malformed_json %q", tt.open, n, p.Status, p.Code, p.Detail, want)
			}
		}
	}
	// Brackets in strings do not count.
	head := `["[\"{[", `
	var v any
	p := asProblem(t, jsonbody.Unmarshal([]byte(head+nest("[", "]", 20000)+"]"), &v))
	if want := fmt.Sprintf("JSON nested deeper than %d levels at byte offset %d", jsonbody.MaxDepth, len(head)+jsonbody.MaxDepth-1); p.Detail != want {
		t.Errorf("brackets in a string, then nested 20000 deep: %q, want %q", p.Detail, want)
	}
}

// TestUnmarshal_invalidUTF8 checks that bytes which are not UTF-8 are
// refused with their offset, rather than replaced by U+FFFD.
func TestUnmarshal_invalidUTF8(t *testing.T) {
	for _, tt := range []struct {
		body   string
		offset string
	}{
		{"{\"a\":\"\xff\"}", "byte offset 6"},
		{"{\"\xc3\":1}", "byte offset 2"},
		{"{\"a\":\"\xed\xa0\x80\"}", "byte offset 6"}, // an encoded surrogate
	} {
		var v map[string]string
		p := asProblem(t, jsonbody.Unmarshal([]byte(tt.body), &v))
		if p.Status != 400 || p.Code != problem.CodeMalformedJSON || !strings.Contains(p.Detail, "UTF-8") || !strings.Contains(p.Detail, tt.offset) {
			t.Errorf("%q: %d %s %q, want 400 malformed_json naming UTF-8 at %s", tt.body, p.Status, p.Code, p.Detail, tt.offset)
		}
	}
	var v map[string]string
	if err := jsonbody.Unmarshal([]byte(`{"a":"é ✓ 🙂"}`), &v); err != nil || v["a"] != "é ✓ 🙂" {
		t.Errorf("valid UTF-8: %v, %q", err, v["a"])
	}
}

// TestUnmarshal_numbers checks huge numbers: out of range for a Go
// number is a 400 naming the field, while a field of any type keeps the
// number exactly as written.
func TestUnmarshal_numbers(t *testing.T) {
	type target struct {
		N int     `json:"n"`
		F float64 `json:"f"`
		U uint8   `json:"u"`
		A any     `json:"a"`
	}
	for _, tt := range []struct{ body, field string }{
		{`{"n":9223372036854775808}`, "n"},
		{`{"n":1e3}`, "n"},
		{`{"n":-99999999999999999999999999}`, "n"},
		{`{"f":1e400}`, "f"},
		{`{"u":256}`, "u"},
		{`{"u":-1}`, "u"},
	} {
		var v target
		p := asProblem(t, jsonbody.Unmarshal([]byte(tt.body), &v))
		if p.Status != 400 || len(p.Errors) != 1 || p.Errors[0].Field != tt.field || p.Errors[0].Rule != "type" {
			t.Errorf("%s: %d %+v, want 400 with a type error on %s", tt.body, p.Status, p.Errors, tt.field)
		}
	}
	var v target
	huge := "1" + strings.Repeat("0", 400)
	if err := jsonbody.Unmarshal([]byte(`{"a":`+huge+`}`), &v); err != nil {
		t.Fatalf("huge number into any: %v", err)
	}
	if got := v.A; got == nil || got.(interface{ String() string }).String() != huge {
		t.Errorf("huge number into any = %v, want it kept as written", got)
	}
}

// BenchmarkUnmarshal measures the decoder on a typical version 3 request
// against encoding/json alone, the baseline: the difference is the cost of
// the UTF-8, depth and repeated-member checks.
func BenchmarkUnmarshal(b *testing.B) {
	body := []byte(`{"request_id":"req-1","claim":{"type":"tool_output","description":"multiply","output":"17 * 3 = 51","input_hash":"sha256:00"},` +
		`"policy":{"tier":"safe","rules":["consistency","non-hallucination"],"timeout_ms":5000},"context":{"app":"demo","user":{"id":7,"tags":["a","b"]}},` +
		`"metadata":{"call_id":"load-1"},"consensus":{"replicas":3,"session_pool":[1,2,3,4],"aggregation":"majority","disagreement_policy":"best_effort"}}`)
	b.Run("encoding_json", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v map[string]any
			if err := json.Unmarshal(body, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("jsonbody", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			var v map[string]any
			if err := jsonbody.Unmarshal(body, &v); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestUnmarshal_manyMembers checks an object with many members, whose
// names go into a map past the first few: a repeat among them is found
// wherever it is, and distinct names are accepted.
func TestUnmarshal_manyMembers(t *testing.T) {
	var b strings.Builder
	b.WriteString("{")
	for i := range 50000 {
		fmt.Fprintf(&b, `"k%d":%d,`, i, i)
	}
	distinct := b.String()[:b.Len()-1] + "}"
	var v map[string]any
	if err := jsonbody.Decode(strings.NewReader(distinct), 4<<20, &v); err != nil || len(v) != 50000 {
		t.Fatalf("50000 distinct members: %v, %d decoded", err, len(v))
	}
	for _, dup := range []string{"k3", "k17", "k49999"} {
		body := b.String() + `"` + dup + `":0,"inner":{"a":1,"a":2}}`
		p := asProblem(t, jsonbody.Decode(strings.NewReader(body), 4<<20, &v))
		if len(p.Errors) != 1 || p.Errors[0].Field != dup {
			t.Errorf("repeat of %s among 50000: %+v, want it named", dup, p.Errors)
		}
	}
}

// TestUnmarshal_duplicateUnusualNames: a repeated member whose name is
// empty or holds path punctuation is named unambiguously.
func TestUnmarshal_duplicateUnusualNames(t *testing.T) {
	tests := []struct{ body, field string }{
		{`{"":0,"":"0"}`, `[""]`},
		{`{"x":{"a.b":1,"a.b":2}}`, `x["a.b"]`},
		{`{"items":[{"id":1,"id":2}]}`, `items[0].id`},
	}
	for _, tt := range tests {
		var v any
		err := jsonbody.Unmarshal([]byte(tt.body), &v)
		var p *problem.Details
		if !errors.As(err, &p) || len(p.Errors) != 1 || p.Errors[0].Field != tt.field || p.Errors[0].Rule != "unique" {
			t.Errorf("Unmarshal(%s) = %v, want rule unique on %s", tt.body, err, tt.field)
		}
	}
}

// TestUnmarshal_sameFieldTwice: two members whose names differ only in
// case name one field, and encoding/json would keep the last in silence;
// they are refused by the field's path, while one member in another
// case, or keys of a map that differ in case, are taken.
func TestUnmarshal_sameFieldTwice(t *testing.T) {
	type claim struct {
		Output string `json:"output"`
		Type   string `json:"type,omitempty"`
	}
	type request struct {
		Claim    claim          `json:"claim"`
		Steps    []claim        `json:"steps,omitempty"`
		Metadata map[string]any `json:"metadata,omitempty"`
	}
	tests := []struct {
		body string
		want []problem.FieldError // nil: accepted
	}{
		{body: `{"Claim":{"OUTPUT":"x"}}`},
		{body: `{"claim":{"output":"x"},"metadata":{"a":1,"A":2}}`},
		{body: `{"claim":{"output":"x"},"steps":[{"output":"a"},{"Output":"b"}]}`},
		{
			body: `{"claim":{"output":"x"},"Claim":{"output":"y"}}`,
			want: []problem.FieldError{{Field: "claim", Rule: "unique", Message: `members "Claim" and "claim" name the same field, as names match regardless of case: send it once`}},
		},
		{ // the members of the two claims are not looked into
			body: `{"claim":{"Output":"x"},"CLAIM":{"output":"y"},"cLaim":{}}`,
			want: []problem.FieldError{{Field: "claim", Rule: "unique", Message: `members "CLAIM", "cLaim" and "claim" name the same field, as names match regardless of case: send it once`}},
		},
		{
			body: `{"claim":{"output":"x","Type":"a","type":"b"},"steps":[{"output":"a"},{"output":"b","OutPut":"c"}]}`,
			want: []problem.FieldError{
				{Field: "claim.type", Rule: "unique", Message: `members "Type" and "type" name the same field, as names match regardless of case: send it once`},
				{Field: "steps[1].output", Rule: "unique", Message: `members "OutPut" and "output" name the same field, as names match regardless of case: send it once`},
			},
		},
		{ // U+017F LATIN SMALL LETTER LONG S folds to s, and encoding/json matches it so
			body: `{"claim":{"output":"x"},"steps":[],"\u017fteps":[]}`,
			want: []problem.FieldError{{Field: "steps", Rule: "unique", Message: `members "steps" and "ſteps" name the same field, as names match regardless of case: send it once`}},
		},
	}
	for _, tt := range tests {
		var v request
		err := jsonbody.Unmarshal([]byte(tt.body), &v)
		if tt.want == nil {
			if err != nil {
				t.Errorf("Unmarshal(%s) = %v, want accepted", tt.body, err)
			}
			continue
		}
		if diff := cmp.Diff(tt.want, asProblem(t, err).Errors); diff != "" {
			t.Errorf("Unmarshal(%s) field errors (-want +got):\n%s", tt.body, diff)
		}
	}
}

// TestCheckAnswer checks that CheckAnswer refuses what Check refuses but
// nesting: an answer far deeper than MaxDepth passes, while a repeated
// member or a field given twice under two spellings, however deep, is
// refused with its path.
func TestCheckAnswer(t *testing.T) {
	deep := func(inner string) string {
		return `{"evidence":{"runs":[{"output":` + strings.Repeat("[", 1000) + inner + strings.Repeat("]", 1000) + `}]}}`
	}
	type answer struct {
		Verdict  string `json:"verdict"`
		Evidence any    `json:"evidence"`
	}
	tests := []struct {
		body  string
		field string // "" for no error
		rule  string
	}{
		{deep(`1`), "", ""},
		{deep(`{"a":1}`), "", ""},
		{deep(`{"a":1,"a":2}`), "evidence.runs[0].output" + strings.Repeat("[0]", 1000) + ".a", "unique"},
		{`{"verdict":"INVALID","verdict":"VALID"}`, "verdict", "unique"},
		{`{"verdict":"INVALID","Verdict":"VALID"}`, "verdict", "unique"},
	}
	for _, tt := range tests {
		var v answer
		if err := json.Unmarshal([]byte(tt.body), &v); err != nil {
			t.Fatalf("encoding/json refuses %.40s…: %v", tt.body, err)
		}
		err := jsonbody.CheckAnswer([]byte(tt.body), &v)
		if tt.field == "" {
			if err != nil {
				t.Errorf("%.40s…: %v, want no error", tt.body, err)
			}
			if err := jsonbody.Check([]byte(tt.body), &v); err == nil {
				t.Errorf("%.40s…: Check accepts it, want too deep", tt.body)
			}
			continue
		}
		p := asProblem(t, err)
		if len(p.Errors) != 1 || p.Errors[0].Field != tt.field || p.Errors[0].Rule != tt.rule {
			t.Errorf("%.40s…: field errors %+v, want %s rule %s", tt.body, p.Errors, tt.field, tt.rule)
		}
	}
}

// TestUnmarshal_arrayTooLong: encoding/json drops the items of a JSON
// array beyond a Go array's length; the decoder refuses them instead, rule
// "max", naming the array, wherever it is. Fewer items are not refused.
func TestUnmarshal_arrayTooLong(t *testing.T) {
	type pairs struct {
		Pair  [2]int            `json:"pair"`
		Rows  [][2]int          `json:"rows"`
		ByKey map[string][1]int `json:"by_key"`
		Name  string            `json:"name"`
	}
	for _, tt := range []struct {
		body string
		want []problem.FieldError
	}{
		{`{"pair":[1,2],"rows":[[1],[]],"by_key":{"a":[1]}}`, nil},
		{`{"pair":[1,2,3]}`, []problem.FieldError{{Field: "pair", Rule: "max", Message: "has 3 items, more than the 2 it may hold"}}},
		{`{"rows":[[1,2],[1,2,3]],"by_key":{"a.b":[1,2]}}`, []problem.FieldError{
			{Field: `by_key["a.b"]`, Rule: "max", Message: "has 2 items, more than the 1 it may hold"},
			{Field: "rows[1]", Rule: "max", Message: "has 3 items, more than the 2 it may hold"},
		}},
		{`{"pair":[1,2,3],"Name":"a","name":"b"}`, []problem.FieldError{
			{Field: "name", Rule: "unique", Message: `members "Name" and "name" name the same field, as names match regardless of case: send it once`},
			{Field: "pair", Rule: "max", Message: "has 3 items, more than the 2 it may hold"},
		}},
	} {
		err := jsonbody.Unmarshal([]byte(tt.body), new(pairs))
		if tt.want == nil {
			if err != nil {
				t.Errorf("%s: %v, want no error", tt.body, err)
			}
			continue
		}
		if diff := cmp.Diff(tt.want, asProblem(t, err).Errors); diff != "" {
			t.Errorf("%s: field errors (-want +got):\n%s", tt.body, diff)
		}
	}
	p := asProblem(t, jsonbody.Unmarshal([]byte(`[1,2,3]`), new([2]int)))
	if len(p.Errors) != 1 || p.Errors[0].Field != "(body)" || p.Errors[0].Rule != "max" {
		t.Errorf("[1,2,3] into [2]int: field errors %+v, want (body) rule max", p.Errors)
	}
}
