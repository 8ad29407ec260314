// Package jsonbody decodes JSON from outside the process: bounded in size,
// with errors that say where the input went wrong, and never a panic.
package jsonbody

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"reflect"
	"slices"
	"strings"

	"github.com/vouchkit/vouch/problem"
)

// DefaultLimit is the body size limit used when a caller passes zero.
const DefaultLimit = 1 << 20

// Decode reads one JSON value of at most limit bytes from r into v. Unknown
// object members are ignored (forward compatibility); trailing data after
// the value, bytes that are not UTF-8, a string escaping a lone UTF-16
// surrogate (such as "\ud800" unpaired), nesting deeper than [MaxDepth],
// an object that repeats a member name, one that gives a field two
// members, such as "claim" and "Claim" (encoding/json matches names
// regardless of case and would keep the last), and an array with more
// items than the Go array it decodes into (encoding/json would drop the
// rest) are errors. Errors are *problem.Details: 413 when the body is
// larger than limit; 400 with code malformed_json and the byte offset
// (counted from 0) of the first wrong byte for malformed JSON, trailing
// data, invalid UTF-8 or too deep nesting; 400 with code invalid_request
// naming the JSON field path for a value of the wrong type or one its
// type refuses, such as a []byte member that is not base64, a time that
// is not RFC 3339 or a ",string" member whose string holds no value of
// the field's type (rule "type"), a repeated member name or field (rule
// "unique"), a lone surrogate (rule "unicode") or an array too long for
// its Go array (rule "max").
func Decode(r io.Reader, limit int64, v any) error {
	body, err := Read(r, limit)
	if err != nil {
		return err
	}
	return Unmarshal(body, v)
}

// Read reads a body of at most limit bytes (zero: [DefaultLimit]) from
// r, with the errors of Decode: 413 when it is larger.
func Read(r io.Reader, limit int64) ([]byte, error) {
	if limit <= 0 {
		limit = DefaultLimit
	}
	body, err := io.ReadAll(io.LimitReader(r, limit+1))
	if err != nil {
		return nil, problem.Newf(http.StatusBadRequest, problem.CodeMalformedJSON, "reading body: %v", err)
	}
	if int64(len(body)) > limit {
		return nil, problem.Newf(http.StatusRequestEntityTooLarge, problem.CodeBodyTooLarge, "body is larger than %d bytes", limit)
	}
	return body, nil
}

// DecodeKnown is Decode that also refuses the members v has no field
// for, as [UnmarshalKnown] does.
func DecodeKnown(r io.Reader, limit int64, v any) error {
	body, err := Read(r, limit)
	if err != nil {
		return err
	}
	return UnmarshalKnown(body, v)
}

// Unmarshal decodes data into v with the errors of Decode.
func Unmarshal(data []byte, v any) error {
	if len(bytes.TrimSpace(data)) == 0 {
		return problem.New(http.StatusBadRequest, problem.CodeMalformedJSON, "body is empty; a JSON object is required")
	}
	if err := checkText(data); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	if err := dec.Decode(v); err != nil {
		return describe(err, data, reflect.TypeOf(v))
	}
	end := dec.InputOffset()
	if _, err := dec.Token(); err != io.EOF {
		rest := data[end:]
		end += int64(len(rest) - len(bytes.TrimLeft(rest, " \t\r\n")))
		return problem.Newf(http.StatusBadRequest, problem.CodeMalformedJSON, "unexpected data after the JSON value at byte offset %d", end)
	}
	return Check(data, v)
}

// Check reports what Unmarshal refuses in data that encoding/json
// accepts: nesting deeper than [MaxDepth], a string escaping a lone
// UTF-16 surrogate, an object that repeats a member name, one that
// gives a field of v two members and an array longer than the Go array
// it decodes into, with the errors of Decode. data must be JSON that
// encoding/json decodes into v: a client checks with it a remote answer
// it decoded with encoding/json's own number types.
func Check(data []byte, v any) error {
	return check(data, v, MaxDepth)
}

// CheckAnswer is [Check] without the limit of [MaxDepth], for an answer
// from a server of the project: a correct answer may nest deeper than
// any request may, since it echoes values at depth (a router's answer
// holds a worker's output at evidence.runs[i].output, four levels down,
// and a worker's output may be as deep as its author likes). data has
// already passed encoding/json's own limit of 10000 levels.
func CheckAnswer(data []byte, v any) error {
	return check(data, v, 0)
}

// check is Check with a depth limit of maxDepth, zero for none.
func check(data []byte, v any, maxDepth int) error {
	folds, err := checkStructure(data, maxDepth)
	if err != nil {
		return err
	}
	var errs []problem.FieldError
	if folds {
		errs = sameField(data, v)
	}
	if t := reflect.TypeOf(v); reachesArray(t, new([]reflect.Type)) {
		errs = append(errs, schemaOfType(t).longArrays(data)...)
		slices.SortStableFunc(errs, func(a, b problem.FieldError) int { return comparePaths(a.Field, b.Field) })
	}
	if len(errs) > 0 {
		return problem.Invalid(errs)
	}
	return nil
}

// reachesArray reports whether a value of type t may hold a Go array
// that JSON decodes into, looking at every field, decoded or not, of the
// types t holds (seen lists those looked at): it spares the types that
// hold none, most of them, building a Schema on every check.
func reachesArray(t reflect.Type, seen *[]reflect.Type) bool {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if t == nil || slices.Contains(*seen, t) {
		return false
	}
	*seen = append(*seen, t)
	switch t.Kind() {
	case reflect.Array:
		return !decodesItself(t)
	case reflect.Slice, reflect.Map:
		return reachesArray(t.Elem(), seen)
	case reflect.Struct:
		if decodesItself(t) {
			return false
		}
		for i := range t.NumField() {
			if reachesArray(t.Field(i).Type, seen) {
				return true
			}
		}
	}
	return false
}

// schemaOfType returns the Schema of t.
func schemaOfType(t reflect.Type) *Schema {
	s := &Schema{t: t, fields: map[reflect.Type]fieldList{}, self: map[reflect.Type]bool{}}
	s.add(t)
	return s
}

// longArrays returns a field error, rule "max", for each JSON array of
// data, a JSON value that decodes into the schema's type, that holds more
// items than the Go array it decodes into: encoding/json drops the items
// beyond the array's length in silence.
func (s *Schema) longArrays(data []byte) []problem.FieldError {
	var errs []problem.FieldError
	w := &walker{
		visit: func(string, string, reflect.StructField, bool, json.RawMessage, fieldList) {},
		array: func(path string, n int, t reflect.Type) {
			if n > t.Len() {
				if path == "" {
					path = "(body)"
				}
				errs = append(errs, problem.FieldError{Field: path, Rule: "max",
					Message: fmt.Sprintf("has %d items, more than the %d it may hold", n, t.Len())})
			}
		},
		schema: s,
	}
	w.walk("", json.RawMessage(data), s.t)
	return errs
}

// describe turns an error of decoding data into a value of type target
// into a problem. A value of the wrong type, or one its type refuses
// (encoding/json's errors for base64, ",string" members and a type's own
// UnmarshalJSON or UnmarshalText, which name no field), is reported with
// every other one (typeErrors), each by its path. A type's UnmarshalJSON
// that rejects a value should return *json.UnmarshalTypeError:
// encoding/json then fills in the field path, and the problem names it.
func describe(err error, data []byte, target reflect.Type) error {
	var syntax *json.SyntaxError
	var typ *json.UnmarshalTypeError
	var p *problem.Details
	switch {
	case errors.As(err, &p):
		return p
	case errors.As(err, &syntax):
		// encoding/json has a depth limit of its own, far above MaxDepth.
		if strings.HasSuffix(syntax.Error(), "exceeded max depth") {
			if i := depthOffset(data); i >= 0 {
				return tooDeep(i)
			}
		}
		// Offset counts the bytes read, the wrong one included.
		return problem.Newf(http.StatusBadRequest, problem.CodeMalformedJSON, "invalid JSON at byte offset %d: %s", max(syntax.Offset-1, 0), strings.TrimPrefix(syntax.Error(), "json: "))
	case errors.As(err, &typ):
		if errs := typeErrors(data, target); len(errs) > 0 {
			return problem.Invalid(errs)
		}
		field := jsonPath(target, typ.Field)
		if field == "" {
			field = "(body)"
		}
		return problem.Invalid([]problem.FieldError{{
			Field:   field,
			Rule:    "type",
			Message: typeMessage(typ),
		}})
	case errors.Is(err, io.ErrUnexpectedEOF):
		return problem.New(http.StatusBadRequest, problem.CodeMalformedJSON, "invalid JSON: the body ends before the value does")
	default:
		// The JSON is well formed: a value its type refuses.
		if errs := typeErrors(data, target); len(errs) > 0 {
			return problem.Invalid(errs)
		}
		return problem.Newf(http.StatusBadRequest, problem.CodeMalformedJSON, "invalid JSON: %s", strings.TrimPrefix(err.Error(), "json: "))
	}
}

func expected(t reflect.Type) string {
	switch t.Name() { // router's types with a JSON shape of their own
	case "SessionID":
		return "a positive integer or a string of digits"
	case "Input":
		return `an object, a string or {"kind":"array","items":[...]}`
	}
	switch t.Kind().String() {
	case "string":
		return "a string"
	case "bool":
		return "a boolean"
	case "slice", "array":
		return "an array"
	case "map", "struct", "ptr", "interface":
		return "an object"
	default:
		return "a number"
	}
}

// jsonPath removes from an encoding/json field path the names of embedded
// structs, whose members encoding/json promotes to the outer object.
func jsonPath(t reflect.Type, field string) string {
	if field == "" {
		return ""
	}
	var out []string
	for _, seg := range strings.Split(field, ".") {
		for t != nil && (t.Kind() == reflect.Pointer || t.Kind() == reflect.Slice || t.Kind() == reflect.Array || t.Kind() == reflect.Map) {
			t = t.Elem()
		}
		if t == nil || t.Kind() != reflect.Struct {
			out = append(out, seg)
			t = nil
			continue
		}
		f, ok := t.FieldByName(seg)
		if ok && f.Anonymous && f.Tag.Get("json") == "" {
			t = f.Type
			continue
		}
		out = append(out, seg)
		t = fieldByJSONName(t, seg)
	}
	return strings.Join(out, ".")
}

// fieldByJSONName returns the type of t's member named name in JSON, or nil.
func fieldByJSONName(t reflect.Type, name string) reflect.Type {
	for _, f := range reflect.VisibleFields(t) {
		tag, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if tag == name || tag == "" && f.Name == name {
			return f.Type
		}
	}
	return nil
}

func typeMessage(e *json.UnmarshalTypeError) string {
	want := expected(e.Type)
	if strings.HasPrefix(e.Value, "number") && want == "a number" {
		if k := e.Type.Kind(); k == reflect.Float32 || k == reflect.Float64 {
			return fmt.Sprintf("%s is out of range: must be a finite number", e.Value)
		}
		return fmt.Sprintf("%s is out of range or not a whole number for this field", e.Value)
	}
	return fmt.Sprintf("expected %s, got %s", want, e.Value)
}
