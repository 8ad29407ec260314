// Package valid runs go-playground/validator over wire structs and reports
// each failure by its JSON field path, never by Go field name.
package valid

import (
	"errors"
	"fmt"
	"reflect"
	"strings"

	"github.com/go-playground/validator/v10"

	"github.com/vouchkit/vouch/internal/jsonbody"
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
	v.RegisterTagNameFunc(jsonName)
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
			Field:   fieldPath(root, fe.Namespace()),
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
// embedded structs, whose members encoding/json promotes. It keeps a map's
// key as validator writes it (prices[m]); [Validator.Struct], which knows
// the struct's type, writes it as jsonbody does (prices.m, m["a.b"]).
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

// fieldPath returns the JSON path of the field at namespace ns (a
// validator namespace: "Request.m[a.b].mode") in a value of type root,
// as jsonbody writes paths (m["a.b"].mode; see [jsonbody.MemberPath]),
// so that a body's failures name a member of a map one way whichever
// check found them. It reads ns by root's type, so that a map's key may
// hold any character. A namespace root does not fit is read by [Path].
func fieldPath(root reflect.Type, ns string) string {
	if root != nil {
		t := deref(root)
		if rest, ok := strings.CutPrefix(ns, t.Name()); ok {
			if path, _, _, ok := resolve(t, rest, "", jsonName); ok && path != "" {
				return path
			}
		}
	}
	return Path(ns)
}

// jsonName is a field's name in a validator namespace: its JSON name.
func jsonName(f reflect.StructField) string {
	name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
	switch {
	case name == "" && f.Anonymous:
		return embedded // encoding/json promotes its fields: no path segment
	case name == "" || name == "-":
		return f.Name
	}
	return name
}

// goName is a field's name in a validator struct namespace.
func goName(f reflect.StructField) string { return f.Name }

// resolve follows ns, the part of a validator namespace below a value of
// type t (".m[a.b].mode"), each struct field named as name names it, and
// returns the JSON path it leads to from path, the field it ends at and
// the struct type holding that field (a zero field and nil when it ends
// at an element of a slice or a value of a map). ok is false when ns does
// not fit t. A map's key runs to a "]" after which the rest fits.
func resolve(t reflect.Type, ns, path string, name func(reflect.StructField) string) (p string, holder reflect.Type, field reflect.StructField, ok bool) {
	t = deref(t)
	if ns == "" {
		return path, nil, reflect.StructField{}, true
	}
	switch {
	case ns[0] == '.' && t.Kind() == reflect.Struct:
		for i := range t.NumField() {
			f := t.Field(i)
			n := name(f)
			rest, found := strings.CutPrefix(ns[1:], n)
			if !f.IsExported() && !f.Anonymous || !found || rest != "" && rest[0] != '.' && rest[0] != '[' {
				continue
			}
			fp := path
			if jsonName(f) != embedded { // encoding/json promotes its members
				fp = jsonbody.MemberPath(path, jsonName(f))
			}
			if p, h, lf, ok := resolve(f.Type, rest, fp, name); ok {
				if rest == "" {
					h, lf = t, f
				}
				return p, h, lf, true
			}
		}
	case ns[0] == '[' && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array):
		if i := strings.IndexByte(ns, ']'); i > 0 {
			return resolve(t.Elem(), ns[i+1:], path+ns[:i+1], name)
		}
	case ns[0] == '[' && t.Kind() == reflect.Map:
		for i := 1; i < len(ns); i++ {
			if ns[i] != ']' {
				continue
			}
			if p, h, f, ok := resolve(t.Elem(), ns[i+1:], jsonbody.MemberPath(path, ns[1:i]), name); ok {
				return p, h, f, true
			}
		}
	}
	return "", nil, reflect.StructField{}, false
}

// deref returns the type t's pointers point to, or t.
func deref(t reflect.Type) reflect.Type {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	return t
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
		if root != nil && fe.Kind() != reflect.String && (fe.Value() == nil || reflect.ValueOf(fe.Value()).IsZero()) {
			// In a struct, a member left out reads as 0 (or nil): it is
			// missing, or 0.
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
	t, _, ok := holder(root, ns)
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
// struct namespace (Request.Consensus.Replicas, Request.Prices[a.b].Mode),
// and that field; false when there is none.
func holder(root reflect.Type, ns string) (reflect.Type, reflect.StructField, bool) {
	if root == nil {
		return nil, reflect.StructField{}, false
	}
	t := deref(root)
	rest, ok := strings.CutPrefix(ns, t.Name())
	if !ok {
		return nil, reflect.StructField{}, false
	}
	_, h, f, ok := resolve(t, rest, "", goName)
	return h, f, ok && h != nil
}

// choices returns the values the oneof rule of the field at ns, in a
// value of type root, allows, joined by commas; "" when it has none.
func choices(root reflect.Type, ns string) string {
	_, f, ok := holder(root, ns)
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
