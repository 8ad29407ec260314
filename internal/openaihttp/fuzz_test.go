package openaihttp

import (
	"encoding/json"
	"strings"
	"testing"
	"unicode/utf8"
)

// FuzzErrorMessage: whatever an endpoint sends as an error body, the
// message as the workers keep it (ErrorMessage, then Scrub) is at most
// MaxMessage bytes, valid UTF-8 when the body is, and never holds the
// key; a body that is not JSON reads as itself.
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
		const key = "sk-fuzz-key"
		msg := ErrorMessage(body)
		got := Scrub(msg, MaxMessage, key, nil)
		if len(got) > MaxMessage {
			t.Fatalf("Scrub(ErrorMessage(%q)) is %d bytes, more than %d", body, len(got), MaxMessage)
		}
		if utf8.Valid(body) && !utf8.ValidString(got) {
			t.Fatalf("Scrub(ErrorMessage(%q)) = %q: not UTF-8 from a UTF-8 body", body, got)
		}
		if strings.Contains(got, key) {
			t.Fatalf("Scrub(ErrorMessage(%q)) = %q holds the key", body, got)
		}
		if !json.Valid(body) {
			if want := strings.TrimSpace(string(body)); msg != want {
				t.Fatalf("ErrorMessage(%q) = %q, want the body %q", body, msg, want)
			}
		}
	})
}
