package trusta2a_test

import (
	"testing"

	"github.com/vouchkit/vouch/trust/trusta2a"
)

// TestV1_valuesTheSpecificationRefuses: a negative historyLength, which
// the specification's validation refuses ("must be non-negative"), is
// invalid params naming the member, in each method that takes it; a
// data part of a JSON mediaType is served.
func TestV1_valuesTheSpecificationRefuses(t *testing.T) {
	f := newFixture(t, trusta2a.Config{})
	const claim = `{"claim":"17 * 3 = 51"}`
	msg := func(part string) string {
		return `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[` + part + `]}`
	}
	for _, tt := range []struct {
		method, params string
		field          string // "": a result
	}{
		{"SendMessage", msg(`{"data":`+claim+`}`) + `,"configuration":{"historyLength":-1}}`, "configuration.historyLength"},
		{"SendMessage", msg(`{"data":`+claim+`,"mediaType":"application/json; charset=utf-8"}`) + `,"configuration":{"historyLength":0}}`, ""},
		{"SendMessage", msg(`{"data":`+claim+`,"mediaType":"application/ld+json"}`) + `}`, ""},
		{"GetTask", `{"id":"t1","historyLength":-1}`, "historyLength"},
		{"ListTasks", `{"historyLength":-2}`, "historyLength"},
	} {
		_, rerr := f.call1(t, "demo-key", "1.0", tt.method, tt.params)
		if tt.field == "" {
			if rerr != nil {
				t.Errorf("%s %s: %+v, want a result", tt.method, tt.params, rerr)
			}
			continue
		}
		var fields []any
		if rerr != nil {
			if d := rerr.details(); len(d) == 1 && d[0]["@type"] == "type.googleapis.com/google.rpc.BadRequest" {
				fields, _ = d[0]["fieldViolations"].([]any)
			}
		}
		if rerr == nil || rerr.Code != -32602 || len(fields) != 1 || fields[0].(map[string]any)["field"] != tt.field {
			t.Errorf("%s %s: %+v, want -32602 naming %s", tt.method, tt.params, rerr, tt.field)
		}
	}
}
