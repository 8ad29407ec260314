package trust

import (
	"encoding/json"
	"fmt"

	"github.com/go-playground/validator/v10"

	"github.com/vouchkit/vouch/internal/valid"
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
