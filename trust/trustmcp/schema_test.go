package trustmcp_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"
)

// The keywords of JSON Schema (2020-12, and draft 7's that the SDK may
// write) whose value is a schema, a list of schemas or a map of them.
var (
	schemaKeywords     = []string{"additionalProperties", "additionalItems", "items", "not", "if", "then", "else", "contains", "propertyNames", "unevaluatedItems", "unevaluatedProperties", "contentSchema"}
	schemaListKeywords = []string{"allOf", "anyOf", "oneOf", "prefixItems", "items"}
	schemaMapKeywords  = []string{"properties", "patternProperties", "$defs", "definitions", "dependentSchemas", "dependencies"}
)

// booleanSchemas returns the path of every boolean schema in the JSON
// schema s, and of every schema that is not an object.
func booleanSchemas(path string, s any) []string {
	obj, ok := s.(map[string]any)
	if !ok {
		return []string{fmt.Sprintf("%s = %v", path, s)}
	}
	var found []string
	for _, k := range schemaKeywords {
		if c, ok := obj[k]; ok {
			if _, list := c.([]any); !list {
				found = append(found, booleanSchemas(path+"/"+k, c)...)
			}
		}
	}
	for _, k := range schemaListKeywords {
		if list, ok := obj[k].([]any); ok {
			for i, c := range list {
				found = append(found, booleanSchemas(fmt.Sprintf("%s/%s/%d", path, k, i), c)...)
			}
		}
	}
	for _, k := range schemaMapKeywords {
		if m, ok := obj[k].(map[string]any); ok {
			for name, c := range m {
				if _, names := c.([]any); k == "dependencies" && names {
					continue // draft 7: a list of property names, not a schema
				}
				found = append(found, booleanSchemas(path+"/"+k+"/"+name, c)...)
			}
		}
	}
	return found
}

// Every schema in every tool's input and output schema, as a client
// receives the tool list, is an object: no true (any value), no false (no
// value). MCP types properties as objects, and the official TypeScript
// SDK rejects the whole list on one boolean property.
func TestServer_noBooleanSchemas(t *testing.T) {
	f := newFixture(t)
	res, err := newSession(t, f.cfg).ListTools(context.Background(), nil)
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Tools) != 7 {
		t.Fatalf("%d tools, want all 7", len(res.Tools))
	}
	for _, tool := range res.Tools {
		for kind, s := range map[string]any{"input": tool.InputSchema, "output": tool.OutputSchema} {
			// As the client received it: generic JSON.
			b, err := json.Marshal(s)
			if err != nil {
				t.Fatal(err)
			}
			var generic any
			if err := json.Unmarshal(b, &generic); err != nil {
				t.Fatal(err)
			}
			for _, p := range booleanSchemas(tool.Name+" "+kind+" schema #", generic) {
				t.Errorf("boolean schema: %s", p)
			}
		}
	}
}

// The walk finds boolean schemas wherever they are.
func TestBooleanSchemas(t *testing.T) {
	var s any
	if err := json.Unmarshal([]byte(`{"type":"object","properties":{"a":true,"b":{"type":"array","items":false},
		"c":{"anyOf":[{"type":"string"},true]},"d":{"description":"any JSON value"}},"additionalProperties":false,
		"$defs":{"e":{"not":true}},"dependencies":{"a":["b"]}}`), &s); err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, p := range booleanSchemas("#", s) {
		got[p] = true
	}
	for _, want := range []string{"#/properties/a = true", "#/properties/b/items = false", "#/properties/c/anyOf/1 = true",
		"#/additionalProperties = false", "#/$defs/e/not = true"} {
		if !got[want] {
			t.Errorf("missed %s (found %v)", want, got)
		}
	}
	if len(got) != 5 {
		t.Errorf("found %v, want 5", got)
	}
}
