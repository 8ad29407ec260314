package jsonbody

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"

	"github.com/vouchkit/vouch/problem"
)

// UnknownMembers returns a field error, rule "unknown", for each member of
// obj (an object as encoding/json decodes it into a map) that
// encoding/json would not decode into a field of v, a struct or a pointer
// to one: path.name, in the order of the names. Decode ignores unknown
// members, as forward compatibility asks; a door calls UnknownMembers on
// an object where an ignored member would be a silent default, such as a
// tolerance whose misspelt bound would read as 0. Names match as
// encoding/json matches them: exactly, or equal under case folding.
func UnknownMembers(path string, obj map[string]json.RawMessage, v any) []problem.FieldError {
	if len(obj) == 0 {
		return nil
	}
	t := reflect.TypeOf(v)
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	var known []string
	for _, f := range reflect.VisibleFields(t) {
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		switch {
		case !f.IsExported() || f.Anonymous || name == "-":
			continue
		case name == "":
			name = f.Name
		}
		known = append(known, name)
	}
	var errs []problem.FieldError
	for _, name := range slices.Sorted(maps.Keys(obj)) {
		if slices.ContainsFunc(known, func(k string) bool { return strings.EqualFold(k, name) }) {
			continue
		}
		var field strings.Builder
		field.WriteString(path)
		member(&field, name)
		errs = append(errs, problem.FieldError{
			Field:   field.String(),
			Rule:    "unknown",
			Message: fmt.Sprintf("is not a member of %s, whose members are %s", path, strings.Join(known, ", ")),
		})
	}
	return errs
}

// MemberPath returns the JSON field path of member name of the object at
// path ("" for the top level), as Decode's errors write paths: path.name,
// or path["name"] when name is empty or holds other characters than
// letters, digits, "_" and "-".
func MemberPath(path, name string) string {
	var b strings.Builder
	b.WriteString(path)
	member(&b, name)
	return b.String()
}
