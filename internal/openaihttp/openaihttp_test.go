package openaihttp

import (
	"net/http"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/google/go-cmp/cmp"
)

func TestErrorMessage(t *testing.T) {
	tests := map[string]string{
		`{"error":{"message":"model not found","type":"invalid_request_error"}}`: "model not found", // OpenAI, Ollama
		`{"object":"error","message":"bad schema","type":"BadRequestError"}`:     "bad schema",      // vLLM
		`{"error":"rate limited"}`:                                           "rate limited",
		"  <html>502 Bad Gateway</html>":                                     "<html>502 Bad Gateway</html>",
		`{"error":{"message":"` + strings.Repeat("x", MaxMessage+10) + `"}}`: strings.Repeat("x", MaxMessage+10),
	}
	for body, want := range tests {
		if got := ErrorMessage([]byte(body)); got != want {
			t.Errorf("ErrorMessage(%s) = %q, want %q", body, got, want)
		}
	}
}

func TestRedact(t *testing.T) {
	headers := http.Header{"X-Tenant": {"tenant-secret"}, "X-Short": {"ab"}}
	got := Redact("key sk-test-123 tenant tenant-secret short ab", "sk-test-123", headers)
	want := "key [REDACTED] tenant [REDACTED] short ab"
	if got != want {
		t.Errorf("Redact = %q, want %q", got, want)
	}
}

// TestRedactOverlappingSecrets: a header value that holds the API key (a
// proxy's "X-Upstream-Auth: tenant-7:sk-…") or overlaps another secret is
// redacted whole, not left in pieces around the key's [REDACTED].
func TestRedactOverlappingSecrets(t *testing.T) {
	const key = "sk-live-0123456789"
	for _, tc := range []struct {
		name    string
		headers http.Header
		s, want string
	}{
		{"holds the key", http.Header{"X-Upstream-Auth": {"tenant-7-secret:" + key}},
			"upstream refused tenant-7-secret:" + key + " and " + key, "upstream refused [REDACTED] and [REDACTED]"},
		{"overlaps the key", http.Header{"X-A": {"0123456789-tail"}},
			"got sk-live-0123456789-tail.", "got [REDACTED]."},
		{"two header values, one in the other", http.Header{"X-A": {"abcd"}, "X-B": {"xx-abcd-yy"}},
			"xx-abcd-yy abcd", "[REDACTED] [REDACTED]"},
	} {
		if got := Redact(tc.s, key, tc.headers); got != tc.want {
			t.Errorf("%s: Redact = %q, want %q", tc.name, got, tc.want)
		}
	}
}

func TestScrub(t *testing.T) {
	const key = "sk-test-0123456789"
	// The key starts 8 bytes before the cut.
	s := strings.Repeat("x", MaxMessage-8) + key
	if got, want := Scrub(s, MaxMessage, key, nil), strings.Repeat("x", MaxMessage-8)+"[REDACTE"; got != want {
		t.Errorf("Scrub = ...%q, want ...%q", got[MaxMessage-20:], want[MaxMessage-20:])
	}
}

func TestSetHeaders(t *testing.T) {
	h := http.Header{}
	SetHeaders(h, "sk-test", http.Header{"x-tenant": {"a", "b"}})
	want := http.Header{
		"X-Tenant":      {"a", "b"},
		"Content-Type":  {"application/json"},
		"Accept":        {"application/json"},
		"Authorization": {"Bearer sk-test"},
	}
	if diff := cmp.Diff(want, h); diff != "" {
		t.Errorf("SetHeaders (-want +got):\n%s", diff)
	}
	h = http.Header{}
	SetHeaders(h, "", nil)
	if _, ok := h["Authorization"]; ok {
		t.Errorf("SetHeaders without a key set Authorization: %v", h)
	}
}

func TestTruncate(t *testing.T) {
	s := strings.Repeat("é", 10) // 2 bytes each
	for n := range 22 {
		got := Truncate(s, n)
		if len(got) > n || !utf8.ValidString(got) || !strings.HasPrefix(s, got) || len(got) < n-1 {
			t.Errorf("Truncate(%q, %d) = %q", s, n, got)
		}
	}
}
