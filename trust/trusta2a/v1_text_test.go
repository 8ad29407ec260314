package trusta2a_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/trust/trusta2a"
)

// TestSendMessage_v1TextViolation: a text part the agent cannot read is
// named once, by its path, and the field violation says what is wrong
// with it; a JSON object sent as text keeps the argument it names.
func TestSendMessage_v1TextViolation(t *testing.T) {
	f := newFixture(t, trusta2a.Config{})
	msg := func(text string) string {
		return `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"text":` + text + `}]}}`
	}
	for _, tt := range []struct {
		params, want string // want: how the description starts
	}{
		{msg(`"hello"`), "is in none of the forms this agent reads; allowed: "},
		{msg(`"{\"claimed_result\":\"x\",\"reciept\":\"inline\"}"`), "reciept: is not an argument of validate_claim"},
	} {
		_, rerr := f.call1(t, "demo-key", "1.0", "SendMessage", tt.params)
		if rerr == nil || rerr.Code != -32602 {
			t.Fatalf("%s: %+v, want invalid params", tt.params, rerr)
		}
		d := rerr.details()
		if len(d) != 1 {
			t.Fatalf("%s: details %v, want one BadRequest", tt.params, d)
		}
		v, _ := d[0]["fieldViolations"].([]any)
		if len(v) != 1 {
			t.Fatalf("%s: details %v, want one field violation", tt.params, d)
		}
		field, _ := v[0].(map[string]any)["field"].(string)
		desc, _ := v[0].(map[string]any)["description"].(string)
		if diff := cmp.Diff("message.parts[0].text", field); diff != "" {
			t.Errorf("%s: field (-want +got):\n%s", tt.params, diff)
		}
		if !strings.HasPrefix(desc, tt.want) {
			t.Errorf("%s: description %q, want it to start %q", tt.params, desc, tt.want)
		}
		if diff := cmp.Diff("Invalid parameters: message.parts[0].text: "+desc, rerr.Message); diff != "" {
			t.Errorf("%s: message (-want +got):\n%s", tt.params, diff)
		}
	}
}
