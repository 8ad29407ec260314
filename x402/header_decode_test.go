package x402_test

import (
	"encoding/base64"
	"errors"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/x402"
)

// TestDecodePaymentPayload_notJSON: a value that is not base64 of a JSON
// object is described as what it is, not as the fault a JSON reader
// finds in its bytes ("invalid UTF-8" for base64 of binary data).
func TestDecodePaymentPayload_notJSON(t *testing.T) {
	b64 := func(s string) string { return base64.StdEncoding.EncodeToString([]byte(s)) }
	type fault struct {
		Code   problem.Code
		Detail string
	}
	for _, tc := range []struct {
		name, value string
		want        fault
	}{
		{"garbage", "garbage", fault{problem.CodeMalformedJSON, "the value is not base64 of JSON: it decodes to 5 bytes of binary data, not UTF-8 text"}},
		{"not base64", "@@@@", fault{problem.CodeMalformedJSON, "the value is not standard base64: illegal base64 data at input byte 0"}},
		{"base64 of text", b64("pay me"), fault{problem.CodeMalformedJSON, "the value is not base64 of JSON: it decodes to text that is not JSON (invalid character 'p' looking for beginning of value, at byte offset 0)"}},
		{"base64 of spaces", b64("  "), fault{problem.CodeMalformedJSON, "the value decodes to white space; it must be base64 of a JSON object"}},
		{"an array", b64(`[]`), fault{problem.CodeMalformedJSON, "the value is base64 of a JSON array; it must be base64 of a JSON object"}},
		{"a string", b64(`"x"`), fault{problem.CodeMalformedJSON, "the value is base64 of a JSON string; it must be base64 of a JSON object"}},
		{"cut short", b64(`{"x402Version":2,"accepted":{`), fault{problem.CodeMalformedJSON, "the value decodes to a JSON object cut short: the text ends before the value does"}},
		{"invalid JSON", b64(`{"x402Version":2,}`), fault{problem.CodeMalformedJSON, "the value decodes to invalid JSON: invalid character '}' looking for beginning of object key string, at byte offset 17 of the decoded text"}},
		{"data after the object", b64(`{"x402Version":2} x`), fault{problem.CodeMalformedJSON, "unexpected data after the JSON value at byte offset 18"}},
		{"invalid UTF-8 in a string", b64("{\"x402Version\":2,\"payload\":{\"s\":\"\xff\"}}"), fault{problem.CodeMalformedJSON, "invalid UTF-8 at byte offset 33"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := x402.DecodePaymentPayload(tc.value)
			var p *problem.Details
			if !errors.Is(err, x402.ErrInvalidHeader) || !errors.As(err, &p) {
				t.Fatalf("err = %v, want ErrInvalidHeader with a problem", err)
			}
			if diff := cmp.Diff(tc.want, fault{p.Code, p.Detail}); diff != "" || p.Status != http.StatusBadRequest {
				t.Errorf("status %d, fault (-want +got):\n%s", p.Status, diff)
			}
			if strings.Contains(p.Detail, "body") {
				t.Errorf("detail %q speaks of a body", p.Detail)
			}
		})
	}
}
