package trustmcp

import (
	"encoding/json"
	"fmt"
	"maps"
	"reflect"
	"slices"

	"github.com/google/jsonschema-go/jsonschema"
)

// anyValue is the description of a schema that admits any JSON value.
const anyValue = "any JSON value"

// explicit rewrites, in place, every subschema of s that would be written
// as a boolean schema into an object schema with the same meaning and a
// description. JSON Schema allows boolean schemas, but MCP types a
// schema's properties as objects, and clients reject a tool list that
// carries one (the TypeScript SDK rejects the whole list). The SDK's
// schema package writes an empty schema (a json.RawMessage: any value) as
// true, and the additionalProperties of a struct ({"not": {}}) as false.
//
// An object that admits no other members than its properties says so with
// propertyNames, the list of its members, so that a validator names the
// member that is not allowed ("tier does not equal any of ..."). Any
// other false becomes {"not": {"description": "any JSON value"}}.
func explicit(s *jsonschema.Schema) {
	if s.AdditionalProperties != nil && isBoolean(s.AdditionalProperties, false) &&
		len(s.Properties) > 0 && len(s.PatternProperties) == 0 && s.PropertyNames == nil {
		// In the order of the properties, then any not in PropertyOrder.
		var names []any
		for _, name := range s.PropertyOrder {
			if _, ok := s.Properties[name]; ok && !slices.Contains(names, any(name)) {
				names = append(names, name)
			}
		}
		for _, name := range slices.Sorted(maps.Keys(s.Properties)) {
			if !slices.Contains(names, any(name)) {
				names = append(names, name)
			}
		}
		s.AdditionalProperties = nil
		s.PropertyNames = &jsonschema.Schema{Description: "the only members allowed", Enum: names}
	}
	forEachChild(s, func(c *jsonschema.Schema) {
		switch {
		case isBoolean(c, true):
			c.Description = anyValue
		case isBoolean(c, false): // {"not": {}}: its child becomes {"description": anyValue}
			c.Description = "no value: nothing is allowed here"
		}
		explicit(c)
	})
}

// isBoolean reports whether s is written as the boolean schema b.
func isBoolean(s *jsonschema.Schema, b bool) bool {
	// Only a schema without subschemas, or with the one empty "not", can
	// marshal as a boolean: leave the others unmarshalled, since marshalling
	// every node's whole subtree costs the square of the schema's depth.
	if n := children(s); n > 1 || n == 1 && (s.Not == nil || children(s.Not) > 0) {
		return false
	}
	got, err := json.Marshal(s)
	return err == nil && string(got) == fmt.Sprint(b)
}

// children counts the immediate subschemas of s.
func children(s *jsonschema.Schema) int {
	n := 0
	forEachChild(s, func(*jsonschema.Schema) { n++ })
	return n
}

// The types of the fields of a jsonschema.Schema that hold subschemas.
var (
	schemaPtr   = reflect.TypeFor[*jsonschema.Schema]()
	schemaSlice = reflect.TypeFor[[]*jsonschema.Schema]()
	schemaMap   = reflect.TypeFor[map[string]*jsonschema.Schema]()
)

// forEachChild calls f on each immediate subschema of s: every field of
// jsonschema.Schema that holds one, a list or a map of them (properties,
// items, additionalProperties, anyOf, $defs and the others).
func forEachChild(s *jsonschema.Schema, f func(*jsonschema.Schema)) {
	v := reflect.ValueOf(s).Elem()
	for i := range v.NumField() {
		switch fv := v.Field(i); fv.Type() {
		case schemaPtr:
			if c := fv.Interface().(*jsonschema.Schema); c != nil {
				f(c)
			}
		case schemaSlice:
			for _, c := range fv.Interface().([]*jsonschema.Schema) {
				if c != nil {
					f(c)
				}
			}
		case schemaMap:
			for _, c := range fv.Interface().(map[string]*jsonschema.Schema) {
				if c != nil {
					f(c)
				}
			}
		}
	}
}
