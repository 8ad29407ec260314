package jsonbody_test

import (
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/internal/jsonbody"
	"github.com/vouchkit/vouch/problem"
)

// bounds is a closed object of two members, as a tolerance is.
type bounds struct {
	Absolute float64 `json:"absolute"`
	Relative float64 `json:"relative,omitempty"`
	Note     string  `json:"-"`
}

func TestUnknownMembers(t *testing.T) {
	for _, c := range []struct {
		obj  string
		want []string
	}{
		{`{}`, nil},
		{`{"absolute":1,"relative":0}`, nil},
		{`{"Absolute":1,"RELATIVE":0}`, nil}, // encoding/json matches them
		{`{"abs":1}`, []string{"t.abs"}},
		{`{"relative":1,"rel":2,"Abs":1}`, []string{"t.Abs", "t.rel"}},
		{`{"Note":"x","-":1}`, []string{"t.-", "t.Note"}},
		{`{"a.b":1,"":2}`, []string{`t[""]`, `t["a.b"]`}},
	} {
		var obj map[string]json.RawMessage
		if err := json.Unmarshal([]byte(c.obj), &obj); err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, fe := range jsonbody.UnknownMembers("t", obj, &bounds{}) {
			if fe.Rule != "unknown" || fe.Message == "" {
				t.Errorf("%s: field error %+v, want rule unknown and a message", c.obj, fe)
			}
			got = append(got, fe.Field)
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s: fields (-want +got):\n%s", c.obj, diff)
		}
	}
}

// FuzzUnknownMembers checks UnknownMembers against encoding/json itself:
// a member is refused exactly when decoding it alone sets no field. Its
// seeds are in testdata/fuzz/FuzzUnknownMembers.
func FuzzUnknownMembers(f *testing.F) {
	f.Fuzz(func(t *testing.T, name string) {
		one, err := json.Marshal(map[string]float64{name: 1})
		if err != nil {
			return
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(one, &obj) != nil || len(obj) != 1 {
			return // a name that is not UTF-8 does not survive as written
		}
		var b bounds
		if err := json.Unmarshal(one, &b); err != nil {
			t.Fatal(err)
		}
		decoded := b != bounds{}
		errs := jsonbody.UnknownMembers("t", obj, bounds{})
		if decoded != (len(errs) == 0) {
			t.Fatalf("member %q: encoding/json decodes it: %v; UnknownMembers says %v", name, decoded, errs)
		}
		for _, fe := range errs {
			if fe.Rule != "unknown" || fe.Field == "" || fe.Field == "t" {
				t.Fatalf("member %q: field error %+v", name, fe)
			}
		}
	})
}

func TestMemberPath(t *testing.T) {
	for _, tt := range []struct{ path, name, want string }{
		{"", "color", "color"},
		{"tolerance", "abs", "tolerance.abs"},
		{"", "a.b", `["a.b"]`},
		{"meta", "", `meta[""]`},
		{"data", "x\x01\"\\é\U000e0001", "data[\"x\\u0001\\\"\\\\é\U000e0001\"]"},
	} {
		got := jsonbody.MemberPath(tt.path, tt.name)
		if got != tt.want {
			t.Errorf("MemberPath(%q, %q) = %s, want %s", tt.path, tt.name, got, tt.want)
		}
		// A name in brackets is a JSON string that reads back as the name.
		if _, quoted, ok := strings.Cut(got, "["); ok {
			var name string
			if err := json.Unmarshal([]byte(strings.TrimSuffix(quoted, "]")), &name); err != nil || name != tt.name {
				t.Errorf("MemberPath(%q, %q) = %s: the bracket reads as %q, %v", tt.path, tt.name, got, name, err)
			}
		}
	}
}

// envelope has the shapes UnmarshalKnown looks into: a nested struct, a
// struct promoted from an embedded one, structs in an array and in a map,
// and values it leaves to others (any, a raw message, a type that decodes
// itself).
type envelope struct {
	promoted
	Consensus *struct {
		Replicas int    `json:"replicas"`
		Policy   string `json:"disagreement_policy"`
	} `json:"consensus"`
	Steps   []bounds          `json:"steps"`
	ByName  map[string]bounds `json:"by_name"`
	Context map[string]any    `json:"context"`
	Raw     json.RawMessage   `json:"raw"`
	Self    selfDecoding      `json:"self"`
}

type promoted struct {
	Mode string `json:"mode"`
}

type selfDecoding struct{ Got string }

func (s *selfDecoding) UnmarshalJSON(b []byte) error { s.Got = string(b); return nil }

func TestUnmarshalKnown(t *testing.T) {
	for _, c := range []struct {
		body string
		want []string
	}{
		{`{"mode":"x","consensus":{"replicas":3,"disagreement_policy":"fail_hard"}}`, nil},
		{`{"MODE":"x","context":{"anything":{"goes":1}},"raw":{"x":1},"self":{"y":2}}`, nil},
		{`{"consensus":{"replicas":3,"disagreemnt_policy":"fail_hard"}}`, []string{"consensus.disagreemnt_policy"}},
		{`{"reciept":{"mode":"inline"},"mode":"x"}`, []string{"reciept"}},
		{`{"steps":[{"absolute":1},{"abs":1}],"by_name":{"a b":{"rel":1}}}`, []string{`by_name["a b"].rel`, "steps[1].abs"}},
		{`{"Promoted":{"mode":"x"},"consensus":null}`, []string{"Promoted"}},
	} {
		var v envelope
		err := jsonbody.UnmarshalKnown([]byte(c.body), &v)
		var got []string
		if err != nil {
			var p *problem.Details
			if !errors.As(err, &p) || p.Status != 400 || p.Code != problem.CodeInvalidRequest {
				t.Fatalf("%s: error %v, want a 400 invalid_request", c.body, err)
			}
			for _, fe := range p.Errors {
				if fe.Rule != "unknown" || !strings.HasPrefix(fe.Message, "is not a member of ") {
					t.Errorf("%s: field error %+v, want rule unknown and its message", c.body, fe)
				}
				got = append(got, fe.Field)
			}
		}
		if diff := cmp.Diff(c.want, got); diff != "" {
			t.Errorf("%s: refused members (-want +got):\n%s", c.body, diff)
		}
	}
}

// The shapes of TestUnknown_followsEncodingJSON: each names a member
// encoding/json decodes in its own way.
type (
	TaggedInner struct {
		X int `json:"x"`
	}
	taggedOuter struct { // inner is a member; x is not promoted
		TaggedInner `json:"inner"`
		Y           int `json:"y"`
	}
	SameGoNameA struct {
		X int `json:"a"`
	}
	SameGoNameB struct {
		X int `json:"b"`
	}
	sameGoName struct { // encoding/json decodes a and b
		SameGoNameA
		SameGoNameB
	}
	dashMember struct {
		//lint:ignore SA5008 the tag "-," names the member "-", the case under test
		D int `json:"-,"`
	}
	ClashUntagged struct {
		V int
	}
	ClashTagged struct {
		W int `json:"V"`
	}
	clashes struct { // V: the tagged one wins at a depth; Z: the least deep
		ClashUntagged
		ClashTagged
		Deeper
		Z int `json:"z"`
	}
	Deeper struct {
		Z int `json:"z"`
		Q int `json:"q"`
	}
	hidden struct { // V at one depth in two structs: neither is decoded
		SameGoNameA
		ClashUntagged
		Other
	}
	Other struct {
		V int
	}
	Left  struct{ ClashUntagged }
	Right struct{ ClashUntagged }
	twice struct { // V reached twice at one depth: not decoded
		Left
		Right
	}
)

// TestUnknown_followsEncodingJSON: Unknown refuses exactly the members
// encoding/json does not decode into a field: by encoding/json's rules of
// tag names and embedded structs, checked against encoding/json itself.
func TestUnknown_followsEncodingJSON(t *testing.T) {
	for _, tc := range []struct {
		body  string
		v     any
		known bool
	}{
		{`{"x":1}`, new(taggedOuter), false},
		{`{"inner":{"x":1}}`, new(taggedOuter), true},
		{`{"a":1}`, new(sameGoName), true},
		{`{"b":1}`, new(sameGoName), true},
		{`{"X":1}`, new(sameGoName), false},
		{`{"-":1}`, new(dashMember), true},
		{`{"V":1}`, new(clashes), true},
		{`{"z":1}`, new(clashes), true},
		{`{"q":1}`, new(clashes), true},
		{`{"V":1}`, new(hidden), false},
		{`{"a":1}`, new(hidden), true},
		{`{"V":1}`, new(twice), false},
	} {
		unknown := jsonbody.Unknown([]byte(tc.body), tc.v)
		if got := len(unknown) == 0; got != tc.known {
			t.Errorf("%s into %T: Unknown = %+v, want known %t", tc.body, tc.v, unknown, tc.known)
		}
		// encoding/json sets a field exactly when it knows the member.
		v := reflect.New(reflect.TypeOf(tc.v).Elem())
		if err := json.Unmarshal([]byte(tc.body), v.Interface()); err != nil {
			t.Fatal(err)
		}
		if set := !v.Elem().IsZero(); set != tc.known {
			t.Errorf("%s into %T: encoding/json sets a field: %t; the test is wrong", tc.body, tc.v, set)
		}
	}
}

// FuzzUnmarshalKnown checks that UnmarshalKnown never panics, answers
// every body with nil or a 4xx problem, and refuses a body exactly when
// Unmarshal accepts it and Unknown finds a member to name.
func FuzzUnmarshalKnown(f *testing.F) {
	for _, s := range []string{
		`{"consensus":{"replicas":3,"disagreemnt_policy":"fail_hard"}}`,
		`{"steps":[{"absolute":1},{"abs":1}],"by_name":{"a b":{"rel":1}},"context":{"x":[{}]}}`,
		`{"self":{"x":1},"raw":[{"y":2}],"MODE":"m"}`,
		`[]`, `null`, `{"consensus":[]}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, body string) {
		var v envelope
		err := jsonbody.UnmarshalKnown([]byte(body), &v)
		var p *problem.Details
		if err != nil && (!errors.As(err, &p) || p.Status < 400 || p.Status > 499) {
			t.Fatalf("%q: error %v, want a 4xx problem", body, err)
		}
		var w envelope
		decoded := jsonbody.Unmarshal([]byte(body), &w) == nil
		unknown := decoded && len(jsonbody.Unknown([]byte(body), &w)) > 0
		if (err == nil) != (decoded && !unknown) {
			t.Fatalf("%q: UnmarshalKnown error %v, but Unmarshal ok %t and unknown members %t", body, err, decoded, unknown)
		}
	})
}
