package trusta2a_test

import (
	"strings"
	"testing"

	"github.com/vouchkit/vouch/trust/trusta2a"
)

// TestSendMessage_textNamesTwice: a text message that gives an option
// twice, or a text holding a JSON object that names a member twice, is
// refused as invalid params naming it, as a data part naming a member
// twice is, rather than read as its last copy (an oracle call run as a
// fast one).
func TestSendMessage_textNamesTwice(t *testing.T) {
	f := newFixture(t, trusta2a.Config{})
	for text, says := range map[string]string{
		`Validate the claimed result "17 * 3 = 51" for the task "What is 17 * 3?" with policy oracle and policy fast`: "policy: is given twice in the text",
		`Fact-check "17 * 3 = 51" with replicas 5 and replicas 3`:                                                     "replicas: is given twice in the text",
		`{"claimed_result":"17 * 3 = 51","policy":"oracle","policy":"fast"}`:                                          `member "policy" appears more than once`,
	} {
		params := map[string]any{"message": map[string]any{"messageId": "m1", "role": "ROLE_USER", "parts": []any{map[string]any{"text": text}}}}
		res, rerr := f.call1(t, "demo-key", "1.0", "SendMessage", params)
		if rerr == nil || rerr.Code != -32602 || !strings.Contains(rerr.Message, says) {
			t.Errorf("%s: answered %.200s, error %+v; want invalid params (-32602) saying %q", text, res, rerr, says)
		}
	}
}
