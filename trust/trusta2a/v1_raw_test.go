package trusta2a_test

import (
	"strings"
	"testing"

	"github.com/vouchkit/vouch/trust/trusta2a"
)

// A part's raw bytes are read as ProtoJSON reads a bytes field, in
// standard or URL-safe base64, padded or not: a file part so sent is
// refused as a file part the agent does not read, not as bytes that are
// not base64. Bytes that are base64 in no form are refused as such.
func TestSendMessage_v1RawInEveryBase64(t *testing.T) {
	f := newFixture(t, trusta2a.Config{})
	for _, tt := range []struct{ raw, want string }{
		{"+/8=", "a file part is not read"}, // standard, padded
		{"+/8", "a file part is not read"},  // standard, unpadded
		{"-_8=", "a file part is not read"}, // URL-safe, padded
		{"-_8", "a file part is not read"},  // URL-safe, unpadded
		{"+_8=", "base64"},                  // two alphabets at once
		{"not base64!", "base64 (standard or URL-safe"},
	} {
		params := `{"message":{"messageId":"m1","role":"ROLE_USER","parts":[{"raw":"` + tt.raw + `","mediaType":"text/plain"}]}}`
		_, rerr := f.call1(t, "demo-key", "1.0", "SendMessage", params)
		if rerr == nil || rerr.Code != -32602 {
			t.Errorf("raw %q: %+v, want error -32602", tt.raw, rerr)
			continue
		}
		var desc string
		if d := rerr.details(); len(d) == 1 {
			if fv, _ := d[0]["fieldViolations"].([]any); len(fv) == 1 {
				v := fv[0].(map[string]any)
				if v["field"] != "message.parts[0].raw" {
					t.Errorf("raw %q: field %v, want message.parts[0].raw", tt.raw, v["field"])
				}
				desc, _ = v["description"].(string)
			}
		}
		if !strings.Contains(desc, tt.want) {
			t.Errorf("raw %q: %+v, want a violation saying %q", tt.raw, rerr, tt.want)
		}
	}
}
