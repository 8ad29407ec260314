package jsonbody

import (
	"bytes"
	"cmp"
	"encoding/base64"
	"encoding/json"
	"errors"
	"maps"
	"net/http"
	"reflect"
	"slices"
	"strconv"
	"strings"

	"github.com/vouchkit/vouch/problem"
)

// visitor is called by a walker for each object member of a struct's
// JSON: its path, the field it decodes into and its value, or known
// false with the struct's fields when no field takes it.
type visitor func(path, name string, f reflect.StructField, known bool, value json.RawMessage, fields fieldList)

// A Schema holds what [Schema.Inspect] reads of a type: the members of
// every struct its JSON decodes into, and which types decode themselves,
// read once. A door builds the Schema of its request type once and
// inspects every body with it. A Schema is safe for concurrent use.
type Schema struct {
	t      reflect.Type
	fields map[reflect.Type]fieldList // each struct type reached
	self   map[reflect.Type]bool      // each type reached: does it decode itself?
	arrays bool                       // is a Go array reached?
}

// SchemaOf returns the Schema of the type of v.
func SchemaOf(v any) *Schema {
	s := &Schema{t: reflect.TypeOf(v), fields: map[reflect.Type]fieldList{}, self: map[reflect.Type]bool{}}
	s.add(s.t)
	return s
}

// add reads t and the types its JSON holds, as the walker reaches them.
func (s *Schema) add(t reflect.Type) {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil {
		return
	}
	if _, ok := s.self[t]; ok {
		return
	}
	s.self[t] = decodesItself(t)
	if s.self[t] {
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		fields := knownFields(t)
		s.fields[t] = fields
		for _, f := range fields {
			s.add(f.Type)
		}
	case reflect.Array:
		s.arrays = true
		s.add(t.Elem())
	case reflect.Slice, reflect.Map:
		s.add(t.Elem())
	}
}

// A walker visits the members of a JSON value against the type it
// decodes into, as its Schema reads the types.
type walker struct {
	visit visitor
	// array, if not nil, is called with each JSON array of n items that
	// encoding/json decodes into a Go array of type t.
	array  func(path string, n int, t reflect.Type)
	schema *Schema
}

// walk calls w.visit for each member of every object of data, a JSON
// value that encoding/json decodes into a value of type t, that
// encoding/json decodes into a struct: members of nested structs, of the
// structs in arrays and in maps. A value held by a map of any, an
// interface, a json.RawMessage or a type that decodes itself is the
// type's to judge and is not looked into; nor is a value whose JSON does
// not fit its type (the type errors' to report).
func (w *walker) walk(path string, data json.RawMessage, t reflect.Type) {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	// The schema has read every type the walk reaches: add follows the
	// same steps.
	if t == nil || w.schema.self[t] {
		return
	}
	switch t.Kind() {
	case reflect.Struct:
		var obj map[string]json.RawMessage
		if json.Unmarshal(data, &obj) != nil {
			return
		}
		fields := w.schema.fields[t]
		for name, value := range obj {
			f, ok := fields.find(name)
			w.visit(path, name, f, ok, value, fields)
			if ok {
				w.walk(MemberPath(path, f.Name), value, f.Type)
			}
		}
	case reflect.Slice, reflect.Array:
		var items []json.RawMessage
		if json.Unmarshal(data, &items) != nil {
			return
		}
		if t.Kind() == reflect.Array && w.array != nil {
			w.array(path, len(items), t)
		}
		for i, item := range items {
			w.walk(path+"["+strconv.Itoa(i)+"]", item, t.Elem())
		}
	case reflect.Map:
		var obj map[string]json.RawMessage
		if json.Unmarshal(data, &obj) != nil {
			return
		}
		for name, value := range obj {
			w.walk(MemberPath(path, name), value, t.Elem())
		}
	}
}

// walk walks data against the schema's type, calling visit.
func (s *Schema) walk(data []byte, visit visitor) {
	w := &walker{visit: visit, schema: s}
	w.walk("", json.RawMessage(data), s.t)
}

// A Member is an object member of a JSON body and the struct field it
// decodes into.
type Member struct {
	// Path is the member's JSON path, as field errors name it
	// (consensus.replicas): each member by its field's JSON name, also
	// when the body wrote it in another case (Consensus.Replicas), which
	// encoding/json accepts.
	Path string
	// Field is the field; its Name is the member's JSON name.
	Field reflect.StructField
}

// Inspect reads data, a JSON value that decodes into v, once, and
// returns, each in the order of their paths, what [Unknown] returns (a
// field error for each member v has no field for), and the members that
// give the zero value to a field that encoding/json leaves out when it
// is zero (`json:",omitempty"`): a string, number or session id field,
// not a pointer, given "" or 0, or a float field given a number that
// underflows to 0 (1e-400). Such a member reads as absent once
// decoded, so a door that took it would answer with the default in
// silence; valid.Validator.Zeros refuses those the field's own rules
// refuse. A door calls Inspect once per body, or [Schema.Inspect] with
// the Schema of its request type, which reads the type once for all
// bodies.
func Inspect(data []byte, v any) (unknown []problem.FieldError, zeros []Member) {
	return SchemaOf(v).Inspect(data)
}

// Unknown is [Unknown] of data against the schema's type.
func (s *Schema) Unknown(data []byte) []problem.FieldError {
	unknown, _ := s.Inspect(data)
	return unknown
}

// Inspect is [Inspect] of data against the schema's type.
func (s *Schema) Inspect(data []byte) (unknown []problem.FieldError, zeros []Member) {
	s.walk(data, func(path, name string, f reflect.StructField, known bool, value json.RawMessage, fields fieldList) {
		switch {
		case !known:
			unknown = append(unknown, unknownMember(path, name, fields))
		case omittedWhenZero(f) && decodesToZero(value, f.Type):
			zeros = append(zeros, Member{Path: MemberPath(path, f.Name), Field: f})
		}
	})
	slices.SortFunc(unknown, func(a, b problem.FieldError) int { return comparePaths(a.Field, b.Field) })
	slices.SortFunc(zeros, func(a, b Member) int { return comparePaths(a.Path, b.Path) })
	return unknown, zeros
}

// sameField returns a field error, rule "unique", for each object of
// data, a JSON value that decodes into v, that gives one struct field
// two members: names that differ, such as "claim" and "Claim", that
// encoding/json matches to the same field, as it matches names
// regardless of case. encoding/json keeps the last; refusing them keeps
// a member from being dropped in silence. The errors name the field by
// its path, in the order of the paths; the members within a field given
// twice are not looked into, since the walk reads both as one path.
func sameField(data []byte, v any) []problem.FieldError {
	names := make(map[string][]string) // a field's path → the members naming it
	SchemaOf(v).walk(data, func(path, name string, f reflect.StructField, known bool, _ json.RawMessage, _ fieldList) {
		if p := MemberPath(path, f.Name); known && !slices.Contains(names[p], name) {
			names[p] = append(names[p], name)
		}
	})
	var errs []problem.FieldError
	for _, p := range slices.Sorted(maps.Keys(names)) {
		n := names[p]
		if len(n) < 2 || slices.ContainsFunc(errs, func(e problem.FieldError) bool { return within(p, e.Field) }) {
			continue
		}
		slices.Sort(n)
		quoted := make([]string, len(n))
		for i, name := range n {
			quoted[i] = strconv.Quote(name)
		}
		list := strings.Join(quoted[:len(n)-1], ", ") + " and " + quoted[len(n)-1]
		errs = append(errs, problem.FieldError{
			Field:   p,
			Rule:    "unique",
			Message: "members " + list + " name the same field, as names match regardless of case: send it once",
		})
	}
	return errs
}

// within reports whether path p lies inside the value at path outer.
func within(p, outer string) bool {
	rest, ok := strings.CutPrefix(p, outer)
	return ok && rest != "" && (rest[0] == '.' || rest[0] == '[')
}

// omittedWhenZero reports whether f is a string or number field, not a
// pointer, that encoding/json leaves out when it is zero.
func omittedWhenZero(f reflect.StructField) bool {
	switch f.Type.Kind() {
	case reflect.String,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64,
		reflect.Float32, reflect.Float64:
	default:
		return false
	}
	_, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
	for opt := range strings.SplitSeq(opts, ",") {
		if opt == "omitempty" {
			return true
		}
	}
	return false
}

// mayBeZero reports whether b, a JSON value, can be the zero of a
// string, integer or session id: a string of no character but 0 after
// an optional minus sign ("", "0", "-0"), or a number whose digits
// before its exponent are all 0. It spares decoding every other value.
func mayBeZero(b []byte) bool {
	if len(b) == 0 {
		return false
	}
	if b[0] == '"' {
		return len(b) >= 2 && len(bytes.Trim(bytes.TrimPrefix(b[1:len(b)-1], []byte("-")), "0")) == 0
	}
	for _, c := range b {
		switch c {
		case '-', '0', '.':
		case 'e', 'E':
			return true
		default:
			return false
		}
	}
	return true
}

// decodesToZero reports whether value, not null, decodes into the zero
// value of t. A number decodes into a float's zero whatever its digits
// when it underflows (1e-400, 0.000…1), as encoding/json reads it
// without an error: every number is decoded into a float.
func decodesToZero(value json.RawMessage, t reflect.Type) bool {
	b := bytes.TrimSpace(value)
	float := t.Kind() == reflect.Float32 || t.Kind() == reflect.Float64
	if !mayBeZero(b) && !(float && Kind(b) == "number") {
		return false
	}
	p := reflect.New(t)
	return json.Unmarshal(value, p.Interface()) == nil && p.Elem().IsZero()
}

// typeErrors returns a field error, rule "type", for each value of data
// that encoding/json cannot decode into its place in a value of type t,
// in the order of their paths: every one, where encoding/json reports the
// first, and an array's element by its index (consensus.session_pool[3]),
// where encoding/json names the array. A member is named by its field's
// JSON name, as encoding/json names it, whatever case the body wrote it
// in.
func typeErrors(data []byte, t reflect.Type) []problem.FieldError {
	var errs []problem.FieldError
	typeErrorsIn(&errs, "", json.RawMessage(data), t)
	slices.SortFunc(errs, func(a, b problem.FieldError) int { return comparePaths(a.Field, b.Field) })
	return errs
}

// comparePaths orders two JSON paths as a reader does: names by their
// bytes and the numbers in them, array indexes included, by value, so
// that items[2] comes before items[10].
func comparePaths(a, b string) int {
	for a != "" && b != "" {
		if isDigit(a[0]) && isDigit(b[0]) {
			na, nb := digitRun(a), digitRun(b)
			if c := cmp.Compare(na, nb); c != 0 {
				return c
			}
			if c := strings.Compare(a[:na], b[:nb]); c != 0 {
				return c
			}
			a, b = a[na:], b[nb:]
			continue
		}
		if a[0] != b[0] {
			return cmp.Compare(a[0], b[0])
		}
		a, b = a[1:], b[1:]
	}
	return cmp.Compare(len(a), len(b))
}

func isDigit(c byte) bool { return '0' <= c && c <= '9' }

// digitRun returns the length of the digits s starts with.
func digitRun(s string) int {
	n := 0
	for n < len(s) && isDigit(s[n]) {
		n++
	}
	return n
}

func typeErrorsIn(errs *[]problem.FieldError, path string, data json.RawMessage, t reflect.Type) {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || bytes.Equal(bytes.TrimSpace(data), []byte("null")) {
		return
	}
	fail := func(inner, message string) {
		field := path
		switch {
		case inner != "" && field != "":
			field += "." + inner
		case inner != "":
			field = inner
		case field == "":
			field = "(body)"
		}
		*errs = append(*errs, problem.FieldError{Field: field, Rule: "type", Message: message})
	}
	container := func(v any) bool {
		if json.Unmarshal(data, v) == nil {
			return true
		}
		fail("", "expected "+expected(t)+", got "+Kind(data))
		return false
	}
	switch {
	case decodesItself(t) || t.Kind() == reflect.Interface || t.Kind() == reflect.Slice && t.Elem().Kind() == reflect.Uint8:
		leafError(data, t, fail)
	case t.Kind() == reflect.Struct:
		var obj map[string]json.RawMessage
		if !container(&obj) {
			return
		}
		fields := knownFields(t)
		for name, value := range obj {
			f, ok := fields.find(name)
			switch {
			case !ok:
			case quoted(f):
				quotedError(errs, MemberPath(path, f.Name), value, f.Type)
			default:
				typeErrorsIn(errs, MemberPath(path, f.Name), value, f.Type)
			}
		}
	case t.Kind() == reflect.Slice || t.Kind() == reflect.Array:
		var items []json.RawMessage
		if !container(&items) {
			return
		}
		for i, item := range items {
			typeErrorsIn(errs, path+"["+strconv.Itoa(i)+"]", item, t.Elem())
		}
	case t.Kind() == reflect.Map && t.Key().Kind() == reflect.String && !decodesItself(t.Key()):
		var obj map[string]json.RawMessage
		if !container(&obj) {
			return
		}
		for name, value := range obj {
			typeErrorsIn(errs, MemberPath(path, name), value, t.Elem())
		}
	default:
		leafError(data, t, fail)
	}
}

// quoted reports whether encoding/json reads field f's value from inside
// a JSON string, as its tag option ",string" asks for a boolean, number
// or string field or a pointer to one.
func quoted(f reflect.StructField) bool {
	_, opts, _ := strings.Cut(f.Tag.Get("json"), ",")
	if !slices.Contains(strings.Split(opts, ","), "string") {
		return false
	}
	t := f.Type
	if t.Name() == "" && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.Bool, reflect.String,
		reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64, reflect.Uintptr,
		reflect.Float32, reflect.Float64:
		return true
	}
	return false
}

// quotedError reports through errs a type error at path for data, the
// value of a field of type t with the tag option ",string" (see quoted),
// when encoding/json does not decode it: it decodes data as the member of
// a struct whose one field has that type and option.
func quotedError(errs *[]problem.FieldError, path string, data json.RawMessage, t reflect.Type) {
	one := reflect.StructOf([]reflect.StructField{{Name: "F", Type: t, Tag: `json:"f,string"`}})
	obj := append(append([]byte(`{"f":`), data...), '}')
	err := json.Unmarshal(obj, reflect.New(one).Interface())
	if err == nil {
		return
	}
	var typ *json.UnmarshalTypeError
	message := "expected " + expected(indirect(t)) + " written as a string, got "
	switch {
	case errors.As(err, &typ):
		message = typeMessage(typ)
	case Kind(data) == "string":
		message += "a string holding none"
	default:
		message += Kind(data)
	}
	*errs = append(*errs, problem.FieldError{Field: path, Rule: "type", Message: message})
}

// leafError decodes data alone into a value of type t and reports a type
// error through fail, with the path inside data that a type decoding
// itself names (its own members' type errors).
func leafError(data json.RawMessage, t reflect.Type, fail func(inner, message string)) {
	err := json.Unmarshal(data, reflect.New(t).Interface())
	var typ *json.UnmarshalTypeError
	var p *problem.Details
	var b64 base64.CorruptInputError
	switch {
	case err == nil:
	case errors.As(err, &typ):
		fail(typ.Field, typeMessage(typ))
	case errors.As(err, &b64):
		fail("", "expected a string of base64 (standard alphabet, with padding): "+err.Error())
	case errors.As(err, &p) && p.Status == http.StatusBadRequest && len(p.Errors) > 0:
		fail("", p.Errors[0].Message)
	default:
		fail("", strings.TrimPrefix(err.Error(), "json: "))
	}
}

// Kind names the kind of the JSON value data as encoding/json's type
// errors do: "object", "array", "string", "bool", "null", "number", or
// "nothing" for no value.
func Kind(data json.RawMessage) string {
	b := bytes.TrimSpace(data)
	if len(b) == 0 {
		return "nothing"
	}
	switch b[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "bool"
	case 'n':
		return "null"
	}
	return "number"
}
