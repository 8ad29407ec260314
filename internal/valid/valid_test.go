package valid_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/go-playground/validator/v10"
	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/vouchkit/vouch/internal/jsonbody"
	"github.com/vouchkit/vouch/internal/valid"
	"github.com/vouchkit/vouch/problem"
)

func TestPath(t *testing.T) {
	tests := []struct{ namespace, want string }{
		{"Request.consensus.replicas", "consensus.replicas"},
		{"Request.session_id", "session_id"},
		{"Request.acceptance_criteria[1]", "acceptance_criteria[1]"},
		{"Request.\x00.objective", "objective"},
		{"Request.\x00.policy.\x00.tier", "policy.tier"},
		{"Request.claim.output", "claim.output"},
		{"Request", "Request"},
	}
	for _, tc := range tests {
		if got := valid.Path(tc.namespace); got != tc.want {
			t.Errorf("Path(%q) = %q, want %q", tc.namespace, got, tc.want)
		}
	}
}

func TestJoin(t *testing.T) {
	if got := valid.Join("", "replicas"); got != "replicas" {
		t.Errorf("Join(\"\", replicas) = %q", got)
	}
	if got := valid.Join("consensus", "replicas"); got != "consensus.replicas" {
		t.Errorf("Join(consensus, replicas) = %q", got)
	}
}

type Common struct {
	Objective string   `json:"objective" validate:"required"`
	Tools     []string `json:"tools" validate:"omitempty,dive,required"`
}

type Block struct {
	Replicas int    `json:"replicas" validate:"required,oneof=1 3 5"`
	Color    string `json:"color,omitempty" validate:"omitempty,color"`
	Pool     []int  `json:"pool" validate:"omitempty,unique,max=3,dive,gt=0"`
}

type Request struct {
	ID    int    `json:"id" validate:"gt=0,lte=10"`
	Name  string `json:"name" validate:"omitempty,max=3"`
	URL   string `json:"url" validate:"omitempty,http_url"`
	NoTag string `validate:"required"`
	Common
	Block  Block    `json:"block"`
	Ptr    *Block   `json:"ptr"`
	Hidden string   `json:"-" validate:"required"`
	Tags   []string `json:"tags" validate:"max=2"`
}

var rules = map[string]valid.Rule{
	"color": {
		Check: func(fl validator.FieldLevel) bool { return fl.Field().String() == "red" },
		Message: func(param string, v any) string {
			return fmt.Sprintf("must be red, got %q", v)
		},
	},
}

// TestValidator_Struct checks that each failure is named by its JSON path,
// with the rule's tag and the message for it.
func TestValidator_Struct(t *testing.T) {
	v := valid.New(rules)
	req := Request{
		ID:     11,
		Name:   "long",
		URL:    "mailto:x@example.com",
		Common: Common{Tools: []string{"a", ""}},
		Block:  Block{Replicas: 2, Color: "blue", Pool: []int{1, 1}},
		Ptr:    &Block{Pool: []int{-1}},
		Tags:   []string{"a", "b", "c"},
	}
	want := []problem.FieldError{
		{Field: "id", Rule: "lte", Message: "must be at most 10"},
		{Field: "name", Rule: "max", Message: "must have at most 3 characters"},
		{Field: "url", Rule: "http_url", Message: `must be an absolute URL, got "mailto:x@example.com"`},
		{Field: "NoTag", Rule: "required", Message: "is required"},
		{Field: "objective", Rule: "required", Message: "is required"},
		{Field: "tools[1]", Rule: "required", Message: "is required"},
		{Field: "block.replicas", Rule: "oneof", Message: "must be one of 1, 3, 5, got 2"},
		{Field: "block.color", Rule: "color", Message: `must be red, got "blue"`},
		{Field: "block.pool", Rule: "unique", Message: "must not repeat a value"},
		{Field: "ptr.replicas", Rule: "required", Message: "is required: one of 1, 3, 5"},
		{Field: "ptr.pool[0]", Rule: "gt", Message: "must be greater than 0"},
		{Field: "Hidden", Rule: "required", Message: "is required"},
		{Field: "tags", Rule: "max", Message: "must have at most 2 elements"},
	}
	if diff := cmp.Diff(want, v.Struct(&req)); diff != "" {
		t.Errorf("Struct (-want +got):\n%s", diff)
	}
}

func TestValidator_valid(t *testing.T) {
	v := valid.New(rules)
	req := Request{
		ID: 1, Name: "abc", URL: "https://example.com/x", NoTag: "x", Hidden: "h",
		Common: Common{Objective: "o", Tools: []string{"a"}},
		Block:  Block{Replicas: 3, Color: "red", Pool: []int{1, 2}},
	}
	if errs := v.Struct(&req); errs != nil {
		t.Errorf("Struct = %+v, want nil", errs)
	}
	if err := v.Check(&req); err != nil {
		t.Errorf("Check = %v, want nil", err)
	}
}

func TestValidator_Check(t *testing.T) {
	v := valid.New(rules)
	err := v.Check(&Block{Replicas: 4})
	var p *problem.Details
	if !errors.As(err, &p) {
		t.Fatalf("Check error %v (%T) is not a *problem.Details", err, err)
	}
	if p.Status != 400 || p.Code != problem.CodeInvalidRequest {
		t.Errorf("problem %d %s, want 400 invalid_request", p.Status, p.Code)
	}
	want := []problem.FieldError{{Field: "replicas", Rule: "oneof", Message: "must be one of 1, 3, 5, got 4"}}
	if diff := cmp.Diff(want, p.Errors); diff != "" {
		t.Errorf("errors (-want +got):\n%s", diff)
	}
	if p.Detail != "replicas: must be one of 1, 3, 5, got 4" {
		t.Errorf("detail %q", p.Detail)
	}
}

// TestValidator_notStruct checks that a value validator cannot handle is
// reported, not a panic.
func TestValidator_notStruct(t *testing.T) {
	got := valid.New(nil).Struct(42)
	if len(got) != 1 || got[0].Field != "(body)" || got[0].Rule != "invalid" || got[0].Message == "" {
		t.Errorf("Struct(42) = %+v", got)
	}
}

// TestNew_badRule checks that registering an unusable rule is a panic at
// construction, the programming error the doc names.
func TestNew_badRule(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Error("New with an empty tag name did not panic")
		}
	}()
	valid.New(map[string]valid.Rule{"": {Check: func(validator.FieldLevel) bool { return true }}})
}

type Report struct {
	TraceID   string  `json:"trace_id,omitempty" validate:"required_without=ReceiptID,excluded_with=ReceiptID"`
	ReceiptID string  `json:"receipt_id,omitempty"`
	Right     *bool   `json:"right,omitempty" validate:"required_without=Verdict,excluded_with=Verdict Note"`
	Verdict   string  `json:"verdict,omitempty"`
	Note      string  `json:"note,omitempty"`
	Items     []Entry `json:"items" validate:"dive"`
}

type Entry struct {
	A string `json:"a,omitempty" validate:"required_without=B"`
	B string `json:"b,omitempty"`
}

// TestValidator_crossField: a rule that names other fields says which,
// by their JSON names, wherever the struct sits.
func TestValidator_crossField(t *testing.T) {
	v := valid.New(nil)
	right := true
	for _, tc := range []struct {
		name string
		req  Report
		want []problem.FieldError
	}{
		{"none", Report{Items: []Entry{{}}}, []problem.FieldError{
			{Field: "trace_id", Rule: "required_without", Message: "is required when receipt_id is absent"},
			{Field: "right", Rule: "required_without", Message: "is required when verdict is absent"},
			{Field: "items[0].a", Rule: "required_without", Message: "is required when b is absent"},
		}},
		{"both", Report{TraceID: "t", ReceiptID: "r", Right: &right, Verdict: "VALID"}, []problem.FieldError{
			{Field: "trace_id", Rule: "excluded_with", Message: "must be absent when receipt_id is given"},
			{Field: "right", Rule: "excluded_with", Message: "must be absent when verdict or note is given"},
		}},
	} {
		if diff := cmp.Diff(tc.want, v.Struct(&tc.req)); diff != "" {
			t.Errorf("%s: Struct (-want +got):\n%s", tc.name, diff)
		}
	}
}

// TestValidator_oneofLeftOut: a number that must be one of a set and is
// 0, as a member left out reads in a struct, is required; given as 0 in
// a body, where absent reads as the default, it is named as given.
func TestValidator_oneofLeftOut(t *testing.T) {
	type counted struct {
		Replicas int `json:"replicas" validate:"oneof=1 3 5"`
		Retries  int `json:"retries,omitempty" validate:"omitempty,oneof=1 2"`
	}
	v := valid.New(rules)
	want := []problem.FieldError{{Field: "replicas", Rule: "oneof", Message: "is required: one of 1, 3, 5"}}
	if diff := cmp.Diff(want, v.Struct(&counted{})); diff != "" {
		t.Errorf("left out (-want +got):\n%s", diff)
	}
	data := []byte(`{"replicas":3,"retries":0}`)
	_, zeros := jsonbody.Inspect(data, &counted{})
	want = []problem.FieldError{{Field: "retries", Rule: "oneof", Message: "must be one of 1, 2, got 0 (leave the member out for the default)"}}
	if diff := cmp.Diff(want, v.Zeros(zeros)); diff != "" {
		t.Errorf("given as 0 (-want +got):\n%s", diff)
	}
}

type modeEntry struct {
	Mode string `json:"mode" validate:"required,oneof=a b"`
	Alt  string `json:"alt" validate:"required_without=Mode"`
}

type mapRequest struct {
	M     map[string]modeEntry            `json:"m" validate:"dive"`
	Lists map[string][]modeEntry          `json:"lists" validate:"dive,dive"`
	Ptrs  map[string]*modeEntry           `json:"ptrs" validate:"dive"`
	Deep  map[string]map[string]modeEntry `json:"deep" validate:"dive,dive"`
	Env   map[string]string               `json:"env" validate:"dive,oneof=x y"`
}

// TestValidator_mapPaths: a failure inside a map value is named by the
// JSON path jsonbody writes for the same member (MemberPath: m.x,
// m["a.b"]), whatever the key holds, so that one body's errors name one
// member one way; and the messages that read the field's rules (the
// choices of oneof, the siblings of required_without) keep them.
func TestValidator_mapPaths(t *testing.T) {
	v := valid.New(nil)
	for _, key := range []string{"x", "a.b", "a]b", "a].mode", "[0]", ""} {
		m := map[string]modeEntry{key: {}}
		req := mapRequest{M: m, Lists: map[string][]modeEntry{key: {{Mode: "a"}, {}}}, Ptrs: map[string]*modeEntry{key: {}},
			Deep: map[string]map[string]modeEntry{key: m}, Env: map[string]string{key: "z"}}
		at := func(path ...string) string {
			p := ""
			for _, s := range path {
				p = jsonbody.MemberPath(p, s)
			}
			return p
		}
		want := []problem.FieldError{
			{Field: at("m", key, "mode"), Rule: "required", Message: "is required: one of a, b"},
			{Field: at("m", key, "alt"), Rule: "required_without", Message: "is required when mode is absent"},
			{Field: at("lists", key) + "[1].mode", Rule: "required", Message: "is required: one of a, b"},
			{Field: at("lists", key) + "[1].alt", Rule: "required_without", Message: "is required when mode is absent"},
			{Field: at("ptrs", key, "mode"), Rule: "required", Message: "is required: one of a, b"},
			{Field: at("ptrs", key, "alt"), Rule: "required_without", Message: "is required when mode is absent"},
			{Field: at("deep", key, key, "mode"), Rule: "required", Message: "is required: one of a, b"},
			{Field: at("deep", key, key, "alt"), Rule: "required_without", Message: "is required when mode is absent"},
			{Field: at("env", key), Rule: "oneof", Message: "must be one of x, y, got z"},
		}
		got := v.Struct(req)
		less := func(a, b problem.FieldError) bool { return a.Field < b.Field }
		if diff := cmp.Diff(want, got, cmpopts.SortSlices(less)); diff != "" {
			t.Errorf("key %q: Struct (-want +got):\n%s", key, diff)
		}
	}
}

// A oneof rule on a pointer or an interface left nil fails as a member
// left out, and its message says so, where it made Struct panic.
func TestValidator_oneofNil(t *testing.T) {
	type Opt struct {
		Replicas *int `json:"replicas" validate:"oneof=1 3 5"`
		Mode     any  `json:"mode" validate:"oneof=a b"`
	}
	want := []problem.FieldError{
		{Field: "replicas", Rule: "oneof", Message: "is required: one of 1, 3, 5"},
		{Field: "mode", Rule: "oneof", Message: "is required: one of a, b"},
	}
	if diff := cmp.Diff(want, valid.New(nil).Struct(&Opt{})); diff != "" {
		t.Errorf("Struct (-want +got):\n%s", diff)
	}
}
