package trust

import (
	"encoding/json"
	"fmt"
	"strings"

	"github.com/go-playground/validator/v10"

	"github.com/vouchkit/vouch/internal/jsonbody"
	"github.com/vouchkit/vouch/internal/valid"
	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/router"
)

// validate holds the rules of the envelope. It is built once and only read
// afterwards (it caches struct metadata, as encoding/json does).
var validate = valid.New(map[string]valid.Rule{
	// rawjson: a json.RawMessage built in process must hold one JSON
	// value; one decoded from a request always does.
	"rawjson": {
		Check: func(fl validator.FieldLevel) bool {
			raw, ok := fl.Field().Interface().(json.RawMessage)
			return ok && json.Valid(raw)
		},
		Message: func(string, any) string {
			return "must be one JSON value; encode a plain Go value with trust.JSON"
		},
	},
})

// JSON returns the JSON encoding of v, for the JSON members of a [Task]:
//
//	trust.Task{ClaimedResult: trust.JSON("Paris"), Spec: trust.JSON("The capital, one word.")}
//
// A json.RawMessage holds JSON, not a plain value: json.RawMessage("Paris")
// is not JSON, and [Request.Validate] refuses it. JSON is for values that
// always encode (strings, numbers, booleans, and maps, slices and structs
// of them); it panics when v cannot be encoded (a NaN, a channel, a
// failing MarshalJSON). Encode other values with json.Marshal and handle
// the error.
func JSON(v any) json.RawMessage {
	raw, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("trust: JSON of a %T: %v", v, err))
	}
	return raw
}

// Validate reports whether r is a valid request: a 400 *Error listing each
// failing field by JSON path, including the task members the mode needs
// and those it has no use for.
func (r *Request) Validate() error {
	errs := append(validate.Struct(r), r.Receipt.FieldErrors("receipt")...)
	need := func(field string, present bool) {
		if !present {
			errs = append(errs, problem.FieldError{Field: field, Rule: "required", Message: fmt.Sprintf("is required in %s mode", r.Mode)})
		}
	}
	has := func(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" }
	switch r.Mode {
	case ModeDelegation:
		need("task.input", !r.Task.Input.IsZero())
		if !r.Task.Input.IsZero() && emptyInput(r.Task.Input) {
			errs = append(errs, problem.FieldError{Field: "task.input", Rule: "required",
				Message: "must not be empty in delegation mode: a string with text, an object with members, or an array form with items"})
		}
	}
	errs = append(errs, r.numericAnswer()...)
	switch r.Mode {
	case ModeValidation:
		need("task.claimed_result", has(r.Task.ClaimedResult))
	case ModeArbitration:
		need("task.claimed_result", has(r.Task.ClaimedResult))
		need("task.dispute_context", has(r.Task.DisputeContext))
	}
	if has(r.Task.ClaimedResult) && r.Mode == ModeDelegation {
		errs = append(errs, problem.FieldError{Field: "task.claimed_result", Rule: "not_delegation",
			Message: "is the result a validation or an arbitration judges; a delegation produces its own"})
	}
	if has(r.Task.Spec) && r.Mode == ModeDelegation && !isString(r.Task.Spec) {
		errs = append(errs, problem.FieldError{Field: "task.spec", Rule: "type",
			Message: "must be a string in delegation mode: the objective the workers are given (a validation or an arbitration also takes an object)"})
	}
	if has(r.Task.Spec) && r.Mode == ModeDelegation && blankString(r.Task.Spec) {
		errs = append(errs, problem.FieldError{Field: "task.spec", Rule: "required",
			Message: "must hold text in delegation mode: it is the objective the workers are given (leave the member out for one made from task.type)"})
	}
	if has(r.Task.DisputeContext) && (r.Mode == ModeDelegation || r.Mode == ModeValidation) {
		errs = append(errs, problem.FieldError{Field: "task.dispute_context", Rule: "arbitration_only",
			Message: "describes the dispute an arbitration settles; a " + string(r.Mode) + " has none"})
	}
	if r.Delegation != nil && r.Mode != ModeDelegation {
		errs = append(errs, problem.FieldError{Field: "delegation", Rule: "mode", Message: fmt.Sprintf("is for delegation mode only, not %s", r.Mode)})
	}
	errs = append(errs, r.contextErrors()...)
	// A receipt hashes the input and the claimed result in RFC 8785 form,
	// which holds numbers only within the range of an IEEE 754 double and
	// strings only of whole characters (no lone UTF-16 surrogate): refuse
	// what cannot be hashed before any work is done, saying why.
	hashable := func(field string, raw json.RawMessage) {
		if _, err := receipt.HashJSON(raw); err != nil && json.Valid(raw) {
			errs = append(errs, problem.FieldError{Field: field, Rule: "hashable",
				Message: "cannot be hashed for the receipt: " + strings.TrimPrefix(err.Error(), "receipt: ")})
		}
	}
	if inc := r.Receipt.Include; r.Receipt.Requested() {
		if inc.InputHash && !r.Task.Input.IsZero() {
			hashable("task.input", r.Task.Input.Raw())
		}
		if inc.OutputHash && r.Mode != ModeDelegation && has(r.Task.ClaimedResult) {
			hashable("task.claimed_result", r.Task.ClaimedResult)
		}
	}
	if len(errs) > 0 {
		return problem.Invalid(errs)
	}
	return nil
}

// contextErrors refuses what r's context would lose or let past the
// task's rules: a member named as the router's context names the task
// (validateTask), which the task's own member would overwrite or which
// would reach workers as the task unchecked, and any context in a
// delegation whose answers agree exactly, whose router task has no
// context to carry it (a judged delegation hands it to its judges).
func (r *Request) contextErrors() []problem.FieldError {
	var errs []problem.FieldError
	lifted := []struct{ name, task string }{ // as validateTask hands them on
		{"task_input", "task.input"},
		{"task_spec", "task.spec"},
		{"dispute_context", "task.dispute_context"},
	}
	for _, m := range lifted {
		if v, ok := r.Context[m.name]; ok && v != nil { // null counts as absent
			errs = append(errs, problem.FieldError{Field: "context." + m.name, Rule: "reserved",
				Message: "is the member in which the service hands the router " + m.task + "; give it as " + m.task})
		}
	}
	if len(r.Context) > 0 && r.Mode == ModeDelegation && !r.Delegation.judged() {
		errs = append(errs, problem.FieldError{Field: "context", Rule: "not_delegation",
			Message: "reaches no worker in a delegation whose answers agree exactly: leave it out, or give job data as metadata"})
	}
	return errs
}

// isString reports whether raw is one JSON string.
func isString(raw json.RawMessage) bool {
	var s string
	return json.Unmarshal(raw, &s) == nil
}

// blankString reports whether raw is one JSON string of white space
// only, the empty string included.
func blankString(raw json.RawMessage) bool {
	var s string
	return json.Unmarshal(raw, &s) == nil && strings.TrimSpace(s) == ""
}

// emptyReceiptMembers returns a field error for each member of the
// receipt block in zeros (see jsonbody.Inspect) given "": a mode, ttl or
// visibility that reads as absent once decoded, so that the call would
// run with the default in silence. r is the decoded receipt block; a
// mode given "" beside other members is left to its own rule.
func emptyReceiptMembers(r receipt.Request, zeros []jsonbody.Member) []problem.FieldError {
	var errs []problem.FieldError
	for _, m := range zeros {
		var rule, msg string
		switch m.Path {
		case "receipt.mode":
			if r.Include != (receipt.Include{}) || r.TTL != "" || r.Visibility != "" || len(r.Counterparties) > 0 {
				continue // refused as required by Request.FieldErrors
			}
			rule, msg = "oneof", `must be one of none, inline, detached, got ""`
		case "receipt.ttl":
			rule, msg = "ttl", `must be "<n>d" with n from 1 to 99999, got ""`
		case "receipt.visibility":
			rule, msg = "oneof", `must be one of private, shared, public, got ""`
		default:
			continue
		}
		errs = append(errs, problem.FieldError{Field: m.Path, Rule: rule, Message: msg + " (leave the member out for the default)"})
	}
	return errs
}

// emptyInput reports whether in, which is present, holds nothing to run:
// a string of white space only, an object without members, or the array
// form without items.
func emptyInput(in router.Input) bool {
	if s, ok := in.String(); ok {
		return strings.TrimSpace(s) == ""
	}
	if members, ok := in.Object(); ok {
		return len(members) == 0
	}
	if items, ok := in.Items(); ok {
		return len(items) == 0
	}
	return false
}
