package jsonbody

import (
	"cmp"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strings"
	"unicode"

	"github.com/vouchkit/vouch/problem"
)

// UnmarshalKnown decodes data into v with the errors of Unmarshal, and
// refuses every object member that encoding/json would not decode into a
// field of v, as [RefuseUnknown] does.
func UnmarshalKnown(data []byte, v any) error {
	return SchemaOf(v).UnmarshalKnown(data, v)
}

// UnmarshalKnown is [UnmarshalKnown] with the schema of v's type, read
// once for every body.
func (s *Schema) UnmarshalKnown(data []byte, v any) error {
	if err := Unmarshal(data, v); err != nil {
		return err
	}
	return Refuse(nil, s.Unknown(data))
}

// RefuseUnknown returns err, the outcome of checking v once Unmarshal has
// decoded data into it (or Unmarshal's own error), with the members of
// data that v has no field for (see [Unknown]) added to it as [Refuse]
// adds errors: each a field error, rule "unknown", naming the member by
// its JSON path. It is how a door reads a request, where an ignored
// member would be a silent default: a misspelt policy read as the
// default one, a misspelt receipt block read as no receipt.
func RefuseUnknown(err error, data []byte, v any) error {
	return Refuse(err, Unknown(data, v))
}

// Refuse returns err, the outcome of checking a decoded body, with errs
// added to it: a 400 with code invalid_request, err's own field errors
// first. An err that is neither nil nor a 400 invalid_request is
// returned as it is, and so is err when errs is empty.
func Refuse(err error, errs []problem.FieldError) error {
	if len(errs) == 0 {
		return err
	}
	if err == nil {
		return problem.Invalid(errs)
	}
	var p *problem.Details
	if !errors.As(err, &p) || p.Status != http.StatusBadRequest || p.Code != problem.CodeInvalidRequest {
		return err
	}
	return problem.Invalid(append(slices.Clip(p.Errors), errs...))
}

// Unknown returns a field error, rule "unknown", for each object member
// of data, a JSON value that encoding/json decodes into v, that
// encoding/json would not decode into a field of a struct: members of
// nested structs, of the structs in arrays and in maps, are named by
// their path (consensus.disagreemnt_policy, steps[1].nme). A value held by
// a map of any, an interface, a json.RawMessage or a type that decodes
// itself is the type's to judge and is not looked into. The errors come
// in the order of the paths.
func Unknown(data []byte, v any) []problem.FieldError {
	return SchemaOf(v).Unknown(data)
}

// decodesItself reports whether t, or a pointer to it, has a JSON or text
// form of its own.
func decodesItself(t reflect.Type) bool {
	p := reflect.PointerTo(t)
	return p.Implements(reflect.TypeFor[json.Unmarshaler]()) || p.Implements(reflect.TypeFor[encoding.TextUnmarshaler]())
}

// fieldList is the members of a struct as encoding/json decodes them.
type fieldList []reflect.StructField

// knownFields returns the members of struct t, each with its JSON name,
// by encoding/json's rules: a field's tag names it, or its Go name does;
// the fields of an embedded struct without a tag name are promoted, level
// by level; of the fields that share a name, the least deep wins, or at
// that depth the only one with a tag name, and two alike hide each other.
func knownFields(t reflect.Type) fieldList {
	type field struct {
		f      reflect.StructField
		tagged bool
	}
	type embedded struct {
		t     reflect.Type
		index []int
	}
	var fields []field
	visited := map[reflect.Type]bool{}
	count := map[reflect.Type]int{} // how often each struct of a level is embedded there
	for next := []embedded{{t: t}}; len(next) > 0; {
		current, nextCount := next, map[reflect.Type]int{}
		next = nil
		for _, e := range current {
			if visited[e.t] {
				continue
			}
			visited[e.t] = true
			for i := range e.t.NumField() {
				sf := e.t.Field(i)
				if !sf.IsExported() && (!sf.Anonymous || indirect(sf.Type).Kind() != reflect.Struct) {
					continue
				}
				tag := sf.Tag.Get("json")
				if tag == "-" {
					continue
				}
				name, _, _ := strings.Cut(tag, ",")
				if !validTagName(name) {
					name = ""
				}
				sf.Index = append(slices.Clip(e.index), i)
				ft := sf.Type
				if ft.Name() == "" && ft.Kind() == reflect.Pointer {
					ft = ft.Elem()
				}
				if name == "" && sf.Anonymous && ft.Kind() == reflect.Struct {
					if nextCount[ft]++; nextCount[ft] == 1 {
						next = append(next, embedded{t: ft, index: sf.Index})
					}
					continue
				}
				tagged := name != ""
				if name == "" {
					name = sf.Name
				}
				sf.Name = name
				fields = append(fields, field{sf, tagged})
				if count[e.t] > 1 { // embedded twice at one depth: both hide it
					fields = append(fields, field{sf, tagged})
				}
			}
		}
		count = nextCount
	}
	// By name, the least deep first, tagged first at a depth.
	slices.SortStableFunc(fields, func(a, b field) int {
		if c := strings.Compare(a.f.Name, b.f.Name); c != 0 {
			return c
		}
		if c := cmp.Compare(len(a.f.Index), len(b.f.Index)); c != 0 {
			return c
		}
		switch {
		case a.tagged == b.tagged:
			return 0
		case a.tagged:
			return -1
		}
		return 1
	})
	var known fieldList
	for i := 0; i < len(fields); {
		n := 1
		for i+n < len(fields) && fields[i+n].f.Name == fields[i].f.Name {
			n++
		}
		if a := fields[i]; n == 1 || len(a.f.Index) != len(fields[i+1].f.Index) || a.tagged != fields[i+1].tagged {
			known = append(known, a.f)
		}
		i += n
	}
	slices.SortFunc(known, func(a, b reflect.StructField) int { return slices.Compare(a.Index, b.Index) })
	return known
}

// validTagName reports whether encoding/json takes name, from a field's
// tag, as the field's JSON name.
func validTagName(name string) bool {
	if name == "" {
		return false
	}
	for _, c := range name {
		if !strings.ContainsRune("!#$%&()*+-./:;<=>?@[]^_{|}~ ", c) && !unicode.IsLetter(c) && !unicode.IsDigit(c) {
			return false
		}
	}
	return true
}

func indirect(t reflect.Type) reflect.Type {
	if t.Kind() == reflect.Pointer {
		return t.Elem()
	}
	return t
}

// find returns the member named name as encoding/json matches names:
// exactly, or else equal under case folding.
func (fs fieldList) find(name string) (reflect.StructField, bool) {
	if i := slices.IndexFunc(fs, func(f reflect.StructField) bool { return f.Name == name }); i >= 0 {
		return fs[i], true
	}
	if i := slices.IndexFunc(fs, func(f reflect.StructField) bool { return strings.EqualFold(f.Name, name) }); i >= 0 {
		return fs[i], true
	}
	return reflect.StructField{}, false
}

func (fs fieldList) names() []string {
	names := make([]string, len(fs))
	for i, f := range fs {
		names[i] = f.Name
	}
	return names
}

func unknownMember(path, name string, fields fieldList) problem.FieldError {
	of := path
	if of == "" {
		of = "the body"
	}
	return problem.FieldError{
		Field:   MemberPath(path, name),
		Rule:    "unknown",
		Message: fmt.Sprintf("is not a member of %s, whose members are %s", of, strings.Join(fields.names(), ", ")),
	}
}

// UnknownMembers returns a field error, rule "unknown", for each member of
// obj (an object as encoding/json decodes it into a map) that
// encoding/json would not decode into a field of v, a struct or a pointer
// to one: path.name, in the order of the names. A door calls
// UnknownMembers on an object it reads member by member; [UnmarshalKnown]
// does the same for a whole body.
func UnknownMembers(path string, obj map[string]json.RawMessage, v any) []problem.FieldError {
	if len(obj) == 0 {
		return nil
	}
	t := indirect(reflect.TypeOf(v))
	fields := knownFields(t)
	var errs []problem.FieldError
	for _, name := range slices.Sorted(maps.Keys(obj)) {
		if _, ok := fields.find(name); !ok {
			errs = append(errs, unknownMember(path, name, fields))
		}
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
