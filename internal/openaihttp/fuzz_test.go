package openaihttp

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzErrorMessage: whatever an endpoint sends as an error body, the
// message is at most MaxMessage bytes, valid UTF-8 when the body is, and
// a body that is not JSON reads as its own start.
func FuzzErrorMessage(f *testing.F) {
	for _, s := range []string{
		`{"error":{"message":"model not found","type":"invalid_request_error"}}`,
		`{"object":"error","message":"bad schema","type":"BadRequestError"}`,
		`{"error":"rate limited"}`,
		`{"error":{"message":""},"message":"top"}`,
		`{"error":null}`,
		"  <html>502 Bad Gateway</html>\n",
		`{"error":{"message":"\ud800"}}`,
		"\xff\xfe",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		got := ErrorMessage(body)
		if len(got) > MaxMessage {
			t.Fatalf("ErrorMessage(%q) is %d bytes, more than %d", body, len(got), MaxMessage)
		}
		if utf8.Valid(body) && !utf8.ValidString(got) {
			t.Fatalf("ErrorMessage(%q) = %q: not UTF-8 from a UTF-8 body", body, got)
		}
		if !json.Valid(body) {
			if want := Truncate(strings.TrimSpace(string(body)), MaxMessage); got != want {
				t.Fatalf("ErrorMessage(%q) = %q, want the body's start %q", body, got, want)
			}
		}
	})
}
