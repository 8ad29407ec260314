package x402

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
)

// ExtensionBazaar is the id of the discovery extension of version 2 terms
// ("bazaar"), through which discovery services list a paid resource.
const ExtensionBazaar = "bazaar"

// Discovery describes a paid route to x402 discovery services: how to call
// it and what it answers. [Middleware] puts it in every 402 answer of the
// route: in the version 2 terms as extensions.bazaar, in the shape the
// official @x402/extensions bazaar extension declares and validates
// ({"info": ..., "schema": ...}, info valid against schema), and in each
// version 1 offer as outputSchema.
//
// The schemas are JSON Schema (draft 2020-12) objects; the examples must
// be valid against them, since a discovery service checks info against
// schema and drops a route that fails.
type Discovery struct {
	// BodyType is how the request body is encoded: "json" (the default),
	// "form-data" or "text". Ignored for methods without a body (GET,
	// HEAD, DELETE), whose input is the query.
	BodyType string
	// Input is an example request: the body, or for a method without a
	// body the query parameters as a JSON object. Nil means {}.
	Input json.RawMessage
	// InputSchema is the JSON Schema of the body, or of the query
	// parameters. Required.
	InputSchema json.RawMessage
	// Output is an example answer, valid against OutputSchema; nil means
	// none (the schema is still given).
	Output json.RawMessage
	// OutputSchema is the JSON Schema of the answer. Required.
	OutputSchema json.RawMessage

	method string // of the request answered, set by of
}

// of returns a copy of d for a request with method.
func (d *Discovery) of(method string) *Discovery {
	c := *d
	c.method = method
	return &c
}

// bodyMethods are the methods whose input is a body, as the bazaar
// extension names them; the others take query parameters.
var bodyMethods = map[string]bool{http.MethodPost: true, http.MethodPut: true, http.MethodPatch: true}

// queryMethods are the methods without a body the bazaar extension names.
var queryMethods = map[string]bool{http.MethodGet: true, http.MethodHead: true, http.MethodDelete: true}

// check rejects a Discovery that would not describe a route.
func (d *Discovery) check() error {
	for _, m := range []struct {
		name     string
		v        json.RawMessage
		required bool
	}{{"Input", d.Input, false}, {"InputSchema", d.InputSchema, true}, {"Output", d.Output, false}, {"OutputSchema", d.OutputSchema, true}} {
		if len(m.v) == 0 {
			if m.required {
				return fmt.Errorf("the route's Discovery.%s is required", m.name)
			}
			continue
		}
		var v any
		if err := json.Unmarshal(m.v, &v); err != nil {
			return fmt.Errorf("the route's Discovery.%s is not JSON: %w", m.name, err)
		}
		if _, ok := v.(map[string]any); !ok && m.name != "Output" {
			return fmt.Errorf("the route's Discovery.%s must be a JSON object", m.name)
		}
	}
	switch d.BodyType {
	case "", "json", "form-data", "text":
		return nil
	}
	return fmt.Errorf("the route's Discovery.BodyType %q is none of json, form-data, text", d.BodyType)
}

// obj is a JSON object being built.
type obj = map[string]any

// errNoMethod: the bazaar extension describes only the methods it names.
var errNoMethod = errors.New("the bazaar extension describes GET, HEAD, DELETE, POST, PUT and PATCH only")

// bazaar returns the bazaar extension of d for a route served with
// method: info (the example call) and schema (which info satisfies).
func (d *Discovery) bazaar(method string) (json.RawMessage, error) {
	input := d.Input
	if len(input) == 0 {
		input = json.RawMessage(`{}`)
	}
	var infoIn, schemaIn obj
	switch {
	case bodyMethods[method]:
		bodyType := d.BodyType
		if bodyType == "" {
			bodyType = "json"
		}
		infoIn = obj{"type": "http", "method": method, "bodyType": bodyType, "body": input}
		schemaIn = obj{
			"type": "object",
			"properties": obj{
				"type":     obj{"type": "string", "const": "http"},
				"method":   obj{"type": "string", "enum": []string{"POST", "PUT", "PATCH"}},
				"bodyType": obj{"type": "string", "enum": []string{"json", "form-data", "text"}},
				"body":     d.InputSchema,
			},
			"required":             []string{"type", "method", "bodyType", "body"},
			"additionalProperties": false,
		}
	case queryMethods[method]:
		infoIn = obj{"type": "http", "method": method, "queryParams": input}
		schemaIn = obj{
			"type": "object",
			"properties": obj{
				"type":        obj{"type": "string", "const": "http"},
				"method":      obj{"type": "string", "enum": []string{"GET", "HEAD", "DELETE"}},
				"queryParams": d.InputSchema,
			},
			"required":             []string{"type", "method"},
			"additionalProperties": false,
		}
	default:
		return nil, errNoMethod
	}
	info := obj{"input": infoIn}
	if len(d.Output) > 0 {
		info["output"] = obj{"type": "json", "example": d.Output}
	}
	output := obj{
		"type":       "object",
		"properties": obj{"type": obj{"type": "string"}, "example": d.OutputSchema},
		"required":   []string{"type"},
	}
	schema := obj{
		"$schema":    "https://json-schema.org/draft/2020-12/schema",
		"type":       "object",
		"properties": obj{"input": schemaIn, "output": output},
		"required":   []string{"input"},
	}
	return json.Marshal(obj{"info": info, "schema": schema})
}

// outputSchemaV1 returns the outputSchema of a version 1 offer for a route
// served with method: the input (the method, and the body's or the query's
// fields, which are the properties of InputSchema) and the output schema,
// in the shape version 1 discovery services read.
func (d *Discovery) outputSchemaV1(method string) (json.RawMessage, error) {
	var in struct {
		Properties json.RawMessage `json:"properties"`
	}
	if err := json.Unmarshal(d.InputSchema, &in); err != nil {
		return nil, err
	}
	fields := in.Properties
	if len(fields) == 0 {
		fields = json.RawMessage(`{}`)
	}
	input := obj{"type": "http", "method": method, "discoverable": true}
	if bodyMethods[method] {
		bodyType := d.BodyType
		if bodyType == "" {
			bodyType = "json"
		}
		input["bodyType"], input["bodyFields"] = bodyType, fields
	} else {
		input["queryParams"] = fields
	}
	return json.Marshal(obj{"input": input, "output": d.OutputSchema})
}

// describe adds the route's Discovery, if any, to its terms: the bazaar
// extension to v2 and the outputSchema to each offer of v1. A method the
// bazaar extension does not name gets the outputSchema only.
func (p Price) describe(v2 *PaymentRequired, v1 *PaymentRequiredV1) error {
	d := p.Discovery
	if d == nil {
		return nil
	}
	ext, err := d.bazaar(d.method)
	switch {
	case err == nil:
		v2.Extensions = map[string]json.RawMessage{ExtensionBazaar: ext}
	case !errors.Is(err, errNoMethod):
		return err
	}
	schema, err := d.outputSchemaV1(d.method)
	if err != nil {
		return err
	}
	for i := range v1.Accepts {
		v1.Accepts[i].OutputSchema = schema
	}
	return nil
}
