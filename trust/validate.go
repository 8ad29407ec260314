package trust

import (
	"encoding/json"
	"fmt"

	"github.com/go-playground/validator/v10"

	"github.com/vouchkit/vouch/internal/valid"
	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/receipt"
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
// failing field by JSON path, including the task members the mode needs.
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
	}
	errs = append(errs, r.numericAnswer()...)
	switch r.Mode {
	case ModeValidation:
		need("task.claimed_result", has(r.Task.ClaimedResult))
	case ModeArbitration:
		need("task.claimed_result", has(r.Task.ClaimedResult))
		need("task.dispute_context", has(r.Task.DisputeContext))
	}
	if r.Delegation != nil && r.Mode != ModeDelegation {
		errs = append(errs, problem.FieldError{Field: "delegation", Rule: "mode", Message: fmt.Sprintf("is for delegation mode only, not %s", r.Mode)})
	}
	// A receipt hashes the input and the claimed result in RFC 8785 form,
	// which holds numbers only within the range of an IEEE 754 double:
	// refuse what cannot be hashed before any work is done.
	hashable := func(field string, raw json.RawMessage) {
		if _, err := receipt.HashJSON(raw); err != nil && json.Valid(raw) {
			errs = append(errs, problem.FieldError{Field: field, Rule: "hashable",
				Message: "cannot be hashed for the receipt (RFC 8785 takes numbers within IEEE 754 double range)"})
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
