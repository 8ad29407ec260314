package trusta2a

import (
	"errors"
	"testing"
)

// TestInputError_allowedIsACopy: the values an error lists as allowed are
// the caller's to keep: changing them changes nothing the agent reads.
func TestInputError_allowedIsACopy(t *testing.T) {
	for _, data := range []map[string]any{
		{"input": "x", "colour": "red"},      // not an argument: the skill's members
		{"input": "x", "agreement": "maybe"}, // not a value: the agreements
		{"skill": "summarize"},               // not a skill: the skills
	} {
		for range 2 {
			_, err := fromData(data)
			var ie *InputError
			if !errors.As(err, &ie) || len(ie.Allowed) == 0 || ie.Allowed[0] == "mangled" {
				t.Fatalf("%v: error %v, want an InputError listing what is allowed, unchanged", data, err)
			}
			ie.Allowed[0] = "mangled" // the next message must read the same
		}
	}
}
