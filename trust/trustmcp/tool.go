package trustmcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"math/big"
	"reflect"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/auth"
	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/vouchkit/vouch/internal/httpapi"
	"github.com/vouchkit/vouch/internal/jsonbody"
	"github.com/vouchkit/vouch/problem"
)

// schemaOptions infer the schema of a json.RawMessage argument or answer
// as any JSON value (the SDK would otherwise infer an array of bytes).
func schemaOptions() *jsonschema.ForOptions {
	return &jsonschema.ForOptions{TypeSchemas: map[reflect.Type]*jsonschema.Schema{reflect.TypeFor[json.RawMessage](): {}}}
}

// enums states the allowed values of the arguments that take one of a
// few, so that the input schema lists them and calls giving others are
// refused.
var enums = map[string][]string{"policy": policies, "receipt": receiptModes, "mode": factcheckModes, "agreement": agreements}

// addTool adds a typed tool, with its schemas inferred from In and Out
// (json.RawMessage as any JSON value), every subschema written as an
// object (see explicit).
//
// It does what mcp.AddTool does (check the arguments against the input
// schema, decode them into In, answer h's Out as structuredContent,
// checked against the output schema, and as text when h gives no content,
// h's error as a tool error), but on the arguments and the answer as
// written: mcp.AddTool decodes both into maps and writes them again, so
// that every number passes through float64 and an integer no float64
// holds (a claimed result's 12345678901234567891) reaches h, and the
// client, rounded (12345678901234567000). The checks read a decoded copy;
// h and the client get the bytes.
func addTool[In, Out any](s *mcp.Server, log *slog.Logger, tool *mcp.Tool, h mcp.ToolHandlerFor[In, Out]) error {
	in, err := jsonschema.ForType(reflect.TypeFor[In](), schemaOptions())
	if err != nil {
		return fmt.Errorf("trustmcp: %s: input schema: %w", tool.Name, err)
	}
	for name, values := range enums {
		if p := in.Properties[name]; p != nil && p.Type == "string" {
			for _, v := range values {
				p.Enum = append(p.Enum, v)
			}
		}
	}
	if p := in.Properties["replicas"]; p != nil {
		p.Enum = []any{3, 5}
	}
	if p := in.Properties["objective"]; p != nil {
		// An objective given as "" would be dropped, the input standing
		// in for it: refuse it as the trust call refuses a delegation's
		// task.spec of no text (one of white space only is refused when
		// the request is built).
		one := 1
		p.MinLength = &one
	}
	if p := in.Properties["answer"]; p != nil {
		for _, v := range answers {
			p.Enum = append(p.Enum, v)
		}
	}
	// The answer of a tool is an object: infer from *T's element type.
	ot := reflect.TypeFor[Out]()
	if ot.Kind() == reflect.Pointer {
		ot = ot.Elem()
	}
	out, err := jsonschema.ForType(ot, schemaOptions())
	if err != nil {
		return fmt.Errorf("trustmcp: %s: output schema: %w", tool.Name, err)
	}
	explicit(in)
	explicit(out)
	tool.InputSchema, tool.OutputSchema = in, out
	inChecks, err := in.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
	if err != nil {
		return fmt.Errorf("trustmcp: %s: input schema: %w", tool.Name, err)
	}
	outChecks, err := out.Resolve(&jsonschema.ResolveOptions{ValidateDefaults: true})
	if err != nil {
		return fmt.Errorf("trustmcp: %s: output schema: %w", tool.Name, err)
	}
	zero := reflect.Zero(ot).Interface() // the answer of a nil *T
	s.AddTool(tool, func(ctx context.Context, req *mcp.CallToolRequest) (_ *mcp.CallToolResult, err error) {
		defer recovered(ctx, log, tool.Name, &err)
		if ti := tokenInfo(req); ti != nil {
			// A token naming no user, or one spelt as the doors name a
			// caller without a credential, would share that caller's
			// state: the server's mistake, which the client cannot mend.
			switch {
			case ti.UserID == "":
				return toolError(errNoUser), nil
			case httpapi.CheckCredentialName(ti.UserID) != nil:
				return toolError(errReservedUser), nil
			}
		}
		var args In
		if err := readArguments(req.Params.Arguments, inChecks, &args); err != nil {
			return toolError(err), nil
		}
		res, answer, err := h(ctx, req, args)
		if err != nil {
			if wire, ok := err.(*jsonrpc.Error); ok {
				return nil, wire
			}
			return toolError(err), nil
		}
		var v any = answer
		if rv := reflect.ValueOf(answer); rv.Kind() == reflect.Pointer && rv.IsNil() {
			v = zero
		}
		structured, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("marshaling output: %w", err)
		}
		if err := check(structured, outChecks); err != nil {
			return nil, fmt.Errorf("validating tool output: %w", err)
		}
		if res == nil {
			res = &mcp.CallToolResult{}
		}
		res.StructuredContent = json.RawMessage(structured)
		if res.Content == nil {
			res.Content = []mcp.Content{&mcp.TextContent{Text: string(structured)}}
		}
		return res, nil
	})
	return nil
}

// recovered turns a panic of the tool name into a JSON-RPC internal
// error, as the HTTP doors turn one into a 500: the SDK runs each call in
// a goroutine of its own, where a panic would end the process. The
// panic's value and stack, which can hold internals, go to log only.
func recovered(ctx context.Context, log *slog.Logger, name string, err *error) {
	if v := recover(); v != nil {
		log.ErrorContext(ctx, "trustmcp: tool panicked", "tool", name, "panic", fmt.Sprint(v), "stack", string(debug.Stack()))
		*err = &jsonrpc.Error{Code: jsonrpc.CodeInternalError, Message: "internal error: the tool failed"}
	}
}

// readArguments checks raw, a tool call's arguments (none when absent or
// null), against the input schema and the rules of every door (see
// checkArguments), and decodes it into args as written, an integer
// argument written with a zero fraction as the integer (see
// wholeNumbers). A value its argument's Go type cannot
// hold (a tolerance of 1e400) is an ArgumentError naming the argument by
// its JSON path, as the HTTP doors name the member.
func readArguments(raw json.RawMessage, schema *jsonschema.Resolved, args any) error {
	if t := bytes.TrimSpace(raw); len(t) == 0 || string(t) == "null" {
		raw = json.RawMessage("{}") // no arguments, as a paid call counts them
	}
	if err := checkInput(raw, schema); err != nil {
		return fmt.Errorf("validating \"arguments\": %w", err)
	}
	if err := checkArguments(raw); err != nil {
		return err
	}
	raw, err := wholeNumbers(raw, schema.Schema())
	if err != nil {
		return err
	}
	err = jsonbody.Unmarshal(raw, args)
	var p *problem.Details
	if errors.As(err, &p) && len(p.Errors) > 0 {
		return &ArgumentError{Argument: p.Errors[0].Field, Message: p.Errors[0].Message}
	}
	return err
}

// wholeNumbers writes each argument that schema types "integer" and raw
// writes with a fraction or an exponent (5.0, 5e0, 50e-1) as the integer
// it is, when it is one, so that it decodes into the int it stands for:
// JSON Schema counts a number whose fraction is zero an integer, so the
// schema check passed it, and JSON writers other than Go's and
// JavaScript's (Python's, for a float) write a whole number so. Any other
// argument keeps its value as written (its white space aside, when one is
// rewritten).
func wholeNumbers(raw json.RawMessage, schema *jsonschema.Schema) (json.RawMessage, error) {
	var args map[string]json.RawMessage
	if json.Unmarshal(raw, &args) != nil {
		return raw, nil
	}
	changed := false
	for name, v := range args {
		p := schema.Properties[name]
		if p == nil || p.Type != "integer" && !slices.Contains(p.Types, "integer") {
			continue
		}
		lit := string(bytes.TrimSpace(v))
		if !strings.ContainsAny(lit, ".eE") || strings.Trim(lit, "-+.eE0123456789") != "" {
			continue
		}
		if _, exp, ok := strings.Cut(strings.ToLower(lit), "e"); ok && len(strings.TrimLeft(exp, "+-0")) > 3 {
			continue // an exponent beyond 999: no integer an argument takes
		}
		var r big.Rat
		if _, ok := r.SetString(lit); !ok || !r.IsInt() {
			continue
		}
		args[name] = json.RawMessage(r.Num().String())
		changed = true
	}
	if !changed {
		return raw, nil
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false) // the other members' values as written, but for white space
	if err := enc.Encode(args); err != nil {
		return nil, err
	}
	return b.Bytes(), nil
}

// check validates data, one JSON value, against schema, on a decoded copy
// (numbers as float64, as the schema's checks read them; see floats).
func check(data []byte, schema *jsonschema.Resolved) error {
	v, err := decoded(data)
	if err != nil {
		return err
	}
	return schema.Validate(&v)
}

// checkInput is check for a tool call's arguments, data: a member written
// as null is read as left out, at any depth, when its schema does not
// take null, as the HTTP doors read a null member (it decodes into its
// zero value). The schema's own check would refuse it with a message of
// the SDK's that names no value.
func checkInput(data []byte, schema *jsonschema.Resolved) error {
	v, err := decoded(data)
	if err != nil {
		return err
	}
	withoutNulls(v, schema.Schema())
	return schema.Validate(&v)
}

// decoded decodes data, one JSON value, with its numbers as float64 (see
// floats).
func decoded(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return floats(v), nil
}

// withoutNulls deletes from v, a decoded JSON value that schema
// describes, each member of an object whose value is null and whose
// schema does not take null.
func withoutNulls(v any, schema *jsonschema.Schema) {
	m, ok := v.(map[string]any)
	if !ok || schema == nil {
		return
	}
	for name, e := range m {
		p := schema.Properties[name]
		switch {
		case p == nil:
		case e == nil && !takesNull(p):
			delete(m, name)
		default:
			withoutNulls(e, p)
		}
	}
}

// takesNull reports whether a value of schema may be null: a schema of no
// type takes any value.
func takesNull(schema *jsonschema.Schema) bool {
	return schema.Type == "null" || slices.Contains(schema.Types, "null") || schema.Type == "" && len(schema.Types) == 0
}

// floats replaces each json.Number in v, a decoded JSON value, by its
// float64, and a number beyond float64's range, which json.Unmarshal
// refuses, by the largest float64 of its sign. Any JSON value is a valid
// claimed result, 1e400 included, as on POST /api/v4/trust; a typed
// argument out of range is refused by name when the arguments are
// decoded into their Go type (readArguments).
func floats(v any) any {
	switch x := v.(type) {
	case json.Number:
		f, err := strconv.ParseFloat(string(x), 64)
		if err != nil && math.IsInf(f, 0) {
			f = math.Copysign(math.MaxFloat64, f)
		}
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = floats(e)
		}
	case []any:
		for i, e := range x {
			x[i] = floats(e)
		}
	}
	return v
}

// toolError is the answer of a call that failed: err as a tool error.
func toolError(err error) *mcp.CallToolResult {
	var res mcp.CallToolResult
	res.SetError(err)
	return &res
}

// errReservedUser answers a caller whose token's UserID is spelt as the
// doors name a caller without a credential ("ip:<address>",
// "payer:<address>"), whose calls, receipts and kept answers it would
// share.
var errReservedUser = errors.New("the server names this token's user as it names callers without a credential; its operator must name the user otherwise")

// errNoUser answers a caller whose verified token names no user, which
// would otherwise be served as a caller without a credential, the host's
// own (trust.DefaultCaller) on a transport that names none.
var errNoUser = errors.New("the server's token names no user; its operator must name one")

// tokenInfo returns what the server verified of req's bearer token; nil
// without one.
func tokenInfo(req *mcp.CallToolRequest) *auth.TokenInfo {
	if req.Extra == nil {
		return nil
	}
	return req.Extra.TokenInfo
}
