package main

import (
	"encoding/json"
	"fmt"
	"reflect"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/x402"
)

// callShape is what an x402 route takes and answers: the Go types the
// router or the trust service decodes and encodes, and an example request.
type callShape struct {
	request, answer reflect.Type
	example         string
}

// shapes are the shapes of the paid operations of the router.
var shapes = map[router.Operation]callShape{
	router.OpDelegateV1: {reflect.TypeFor[router.DelegateV1Request](), reflect.TypeFor[router.DelegateV1Response](),
		`{"session_id":1,"task_request_input":"What is 17 * 3?"}`},
	router.OpValidateV1: {reflect.TypeFor[router.ValidateV1Request](), reflect.TypeFor[router.ValidateV1Response](),
		`{"session_id":1,"task_request_input":"What is 17 * 3?","task_result_output":"17 * 3 = 51"}`},
	router.OpFactcheckV1: {reflect.TypeFor[router.FactcheckV1Request](), reflect.TypeFor[router.FactcheckResponse](),
		`{"claim":"17 * 3 = 51","policy":{"tier":"safe"}}`},
	router.OpDelegateV2: {reflect.TypeFor[router.DelegateV2Request](), reflect.TypeFor[router.DelegateV2Response](),
		`{"session_id":1,"objective":"What is 17 * 3?","input":"17 * 3","execution":{},"policy":{"tier":"fast"}}`},
	router.OpValidateV2: {reflect.TypeFor[router.ValidateV2Request](), reflect.TypeFor[router.ValidateV2Response](),
		`{"session_id":1,"claim":{"type":"tool_output","output":"17 * 3 = 51"},"policy":{"tier":"safe"}}`},
}

// trustShape is the shape of the paid trust call.
var trustShape = callShape{reflect.TypeFor[trust.Request](), reflect.TypeFor[trust.Response](),
	`{"mode":"validation","policy":"safe","task":{"input":"What is 17 * 3?","claimed_result":"51"}}`}

// pingDiscovery describes GET /api/v1/x402/ping, which takes nothing and
// answers {"message":"pong"}.
var pingDiscovery = &x402.Discovery{
	InputSchema:  json.RawMessage(`{"type":"object","properties":{},"additionalProperties":false}`),
	Output:       json.RawMessage(`{"message":"pong"}`),
	OutputSchema: json.RawMessage(`{"type":"object","properties":{"message":{"type":"string","const":"pong"}},"required":["message"]}`),
}

// schemaOptions write a schema for the types whose JSON is not their Go
// shape: any JSON value where the Go type holds raw JSON.
var schemaOptions = &jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{
	reflect.TypeFor[json.RawMessage](): {Description: "any JSON value"},
	reflect.TypeFor[router.Input]():    {Description: "the task's input: a string, an object, or an array of messages"},
}}

// discovery describes a route of shape s to x402 discovery services: the
// JSON Schemas of its request and answer, reflected from their Go types,
// and its example request.
func (s callShape) discovery() (*x402.Discovery, error) {
	in, err := jsonschema.ForType(s.request, schemaOptions)
	if err != nil {
		return nil, fmt.Errorf("schema of %s: %w", s.request, err)
	}
	out, err := jsonschema.ForType(s.answer, schemaOptions)
	if err != nil {
		return nil, fmt.Errorf("schema of %s: %w", s.answer, err)
	}
	d := &x402.Discovery{Input: json.RawMessage(s.example)}
	if d.InputSchema, err = json.Marshal(in); err != nil {
		return nil, err
	}
	if d.OutputSchema, err = json.Marshal(out); err != nil {
		return nil, err
	}
	return d, nil
}

// discoveryOf describes the paid router operation op.
func discoveryOf(op router.Operation) (*x402.Discovery, error) {
	if op == router.OpPing {
		return pingDiscovery, nil
	}
	s, ok := shapes[op]
	if !ok {
		return nil, fmt.Errorf("no description of the operation %s", op)
	}
	return s.discovery()
}
