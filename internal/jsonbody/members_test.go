package jsonbody_test

import (
	"encoding/json"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/internal/jsonbody"
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
	} {
		if got := jsonbody.MemberPath(tt.path, tt.name); got != tt.want {
			t.Errorf("MemberPath(%q, %q) = %s, want %s", tt.path, tt.name, got, tt.want)
		}
	}
}
