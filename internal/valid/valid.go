// Package valid runs go-playground/validator over wire structs and reports
// each failure by its JSON field path, never by Go field name.
package valid

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/go-playground/validator/v10"

	"github.com/vouchkit/vouch/problem"
)

// Rule is a custom validation rule: Check decides whether a field passes,
// and Message explains a failure. A Rule with no Check, under the tag of a
// built-in rule, keeps that rule and replaces its message.
type Rule struct {
	Check   validator.Func
	Message func(param string, value any) string
}

// Validator validates structs. It is safe for concurrent use; build one per
// package and keep it (it caches struct metadata).
type Validator struct {
	v     *validator.Validate
	rules map[string]Rule
}

// New returns a Validator that knows the given custom rules by tag name.
func New(rules map[string]Rule) *Validator {
	v := validator.New(validator.WithRequiredStructEnabled())
	v.RegisterTagNameFunc(func(f reflect.StructField) string {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case name == "" && f.Anonymous:
			return embedded // encoding/json promotes its fields: no path segment
		case name == "" || name == "-":
			return f.Name
		}
		return name
	})
	for tag, r := range rules {
		if r.Check == nil {
			continue
		}
		if err := v.RegisterValidation(tag, r.Check); err != nil {
			panic(fmt.Sprintf("valid: registering rule %q: %v", tag, err)) // a programming error
		}
	}
	return &Validator{v: v, rules: rules}
}

// Struct validates s and returns nil or the failures, one per field, as
// problem field errors.
func (v *Validator) Struct(s any) []problem.FieldError {
	err := v.v.Struct(s)
	if err == nil {
		return nil
	}
	var verrs validator.ValidationErrors
	if !errors.As(err, &verrs) {
		return []problem.FieldError{{Field: "(body)", Rule: "invalid", Message: err.Error()}}
	}
	out := make([]problem.FieldError, 0, len(verrs))
	root := reflect.TypeOf(s)
	for _, fe := range verrs {
		out = append(out, problem.FieldError{
			Field:   Path(fe.Namespace()),
			Rule:    fe.Tag(),
			Message: v.message(fe, root),
		})
	}
	return out
}

// Check validates s and returns nil or a 400 *problem.Details.
func (v *Validator) Check(s any) error {
	if errs := v.Struct(s); errs != nil {
		return problem.Invalid(errs)
	}
	return nil
}

// embedded names an embedded struct without a JSON name in a namespace; it
// cannot occur in a Go identifier or a JSON tag, so Path can drop it safely.
const embedded = "\x00"

// Path turns a validator namespace ("Request.consensus.replicas") into a JSON
// path ("consensus.replicas"): it drops the root type name and the names of
// embedded structs, whose members encoding/json promotes.
func Path(namespace string) string {
	segs := strings.Split(namespace, ".")
	out := segs[:0]
	for _, s := range segs[1:] {
		if s != embedded {
			out = append(out, s)
		}
	}
	if len(out) == 0 {
		return namespace
	}
	return strings.Join(out, ".")
}

// Join appends a member name to a JSON path prefix.
func Join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}

// message is the message of fe, a failure of a field of a value of type
// root; root is nil for a value checked alone, one the body gave.
func (v *Validator) message(fe validator.FieldError, root reflect.Type) string {
	if r, ok := v.rules[fe.Tag()]; ok && r.Message != nil {
		return r.Message(fe.Param(), fe.Value())
	}
	p := fe.Param()
	switch fe.Tag() {
	case "required":
		if values := choices(root, fe.StructNamespace()); values != "" {
			return "is required: one of " + values
		}
		return "is required"
	case "oneof":
		values := strings.Join(strings.Fields(p), ", ")
		if root != nil && fe.Kind() != reflect.String && reflect.ValueOf(fe.Value()).IsZero() {
			// In a struct, a member left out reads as 0: it is missing, or 0.
			return "is required: one of " + values
		}
		got := fmt.Sprint(fe.Value())
		if got == "" {
			got = `""`
		}
		return fmt.Sprintf("must be one of %s, got %s", values, got)
	case "gt":
		return "must be greater than " + p
	case "gte", "min":
		if unit := lengthUnit(fe.Kind()); unit != "" {
			return "must have at least " + p + " " + unit
		}
		return "must be at least " + p
	case "lte", "max":
		if unit := lengthUnit(fe.Kind()); unit != "" {
			return "must have at most " + p + " " + unit
		}
		return "must be at most " + p
	case "url", "http_url":
		return fmt.Sprintf("must be an absolute URL, got %q", fe.Value())
	case "unique":
		return "must not repeat a value"
	case "required_without":
		if others := siblings(root, fe.StructNamespace(), p); others != "" {
			return "is required when " + others + " is absent"
		}
		return "is required here"
	case "excluded_with":
		if others := siblings(root, fe.StructNamespace(), p); others != "" {
			return "must be absent when " + others + " is given"
		}
		return "must be absent here"
	case "required_if", "required_unless":
		return "is required here"
	case "excluded_unless":
		return "must be absent here"
	default:
		return fmt.Sprintf("failed rule %q", fe.Tag())
	}
}

// lengthUnit names what a length bound counts for a value of kind k, or
// returns "" when the bound is on the value itself.
func lengthUnit(k reflect.Kind) string {
	switch k {
	case reflect.String:
		return "characters"
	case reflect.Slice, reflect.Array, reflect.Map:
		return "elements"
	}
	return ""
}

// siblings returns the JSON names of the fields named by goNames (Go
// names, space-separated, as a cross-field rule's parameter gives them)
// in the struct holding the field of namespace ns (Go names from root's
// type down, as validator.FieldError.StructNamespace gives it), joined by
// "or"; "" when a name is not found.
func siblings(root reflect.Type, ns, goNames string) string {
	t, ok := holder(root, ns)
	if !ok {
		return ""
	}
	var names []string
	for _, g := range strings.Fields(goNames) {
		f, ok := t.FieldByName(g)
		if !ok {
			return ""
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "" || name == "-" {
			name = f.Name
		}
		names = append(names, name)
	}
	return strings.Join(names, " or ")
}

// holder returns the struct type of root that holds the field at ns, a
// struct namespace (Request.Consensus.Replicas), and false when there is
// none.
func holder(root reflect.Type, ns string) (reflect.Type, bool) {
	segs := strings.Split(ns, ".")
	if root == nil || len(segs) < 2 {
		return nil, false
	}
	t := root
	for _, seg := range segs[1 : len(segs)-1] {
		if t = elem(t); t.Kind() != reflect.Struct {
			return nil, false
		}
		name, _, _ := strings.Cut(seg, "[")
		f, ok := t.FieldByName(name)
		if !ok {
			return nil, false
		}
		t = f.Type
	}
	t = elem(t)
	return t, t.Kind() == reflect.Struct
}

// choices returns the values the oneof rule of the field at ns, in a
// value of type root, allows, joined by commas; "" when it has none.
func choices(root reflect.Type, ns string) string {
	t, ok := holder(root, ns)
	if !ok {
		return ""
	}
	f, ok := t.FieldByName(ns[strings.LastIndex(ns, ".")+1:])
	if !ok {
		return ""
	}
	for rule := range strings.SplitSeq(f.Tag.Get("validate"), ",") {
		if values, ok := strings.CutPrefix(rule, "oneof="); ok {
			return strings.Join(strings.Fields(values), ", ")
		}
	}
	return ""
}

// elem returns the type a value of t holds: t itself, or what its
// pointers, slices, arrays and maps hold.
func elem(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map {
		t = t.Elem()
	}
	return t
}
