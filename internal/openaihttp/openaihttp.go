// Package openaihttp holds what the clients of OpenAI-compatible endpoints
// share. It sends a JSON POST with its retries ([Post]), reads the message
// out of an error body, and keeps the API key and extra headers' values
// out of the text that reaches an error.
package openaihttp

import (
	"encoding/json"
	"net/http"
	"strings"
	"unicode/utf8"
)

// MaxMessage is the most bytes of an error body's message [ErrorMessage]
// returns.
const MaxMessage = 512

// errorBody is the error answer of OpenAI-compatible servers: most nest it
// under "error", some (vLLM) put message at the top, some send a string.
type errorBody struct {
	Error   json.RawMessage `json:"error"`
	Message string          `json:"message"`
}

// ErrorMessage extracts the message of an error body ({"error":
// {"message"}}, {"error": "..."} or {"message"}), or returns the body
// when it has none. It does not cut it: [Scrub] it to [MaxMessage] bytes.
func ErrorMessage(data []byte) string {
	var eb errorBody
	if json.Unmarshal(data, &eb) == nil {
		var nested struct {
			Message string `json:"message"`
		}
		var flat string
		switch {
		case json.Unmarshal(eb.Error, &nested) == nil && nested.Message != "":
			return nested.Message
		case json.Unmarshal(eb.Error, &flat) == nil && flat != "":
			return flat
		case eb.Message != "":
			return eb.Message
		}
	}
	return strings.TrimSpace(string(data))
}

// Redact replaces apiKey and the values of headers in s with "[REDACTED]".
// Values shorter than 4 bytes are left alone: they would match by chance.
// It finds every secret in s before it replaces any, and replaces each
// run of text that secrets cover with one "[REDACTED]": a header value
// that holds the key (a proxy's "tenant-7:sk-…"), or overlaps another
// secret, goes whole, whatever the order of the secrets.
func Redact(s, apiKey string, headers http.Header) string {
	secrets := []string{apiKey}
	for _, vals := range headers {
		secrets = append(secrets, vals...)
	}
	var hidden []bool // hidden[i]: byte i of s is a secret's
	for _, v := range secrets {
		if len(v) < 4 {
			continue
		}
		for i := 0; ; i++ {
			j := strings.Index(s[i:], v)
			if j < 0 {
				break
			}
			if hidden == nil {
				hidden = make([]bool, len(s))
			}
			i += j
			for k := i; k < i+len(v); k++ {
				hidden[k] = true
			}
		}
	}
	if hidden == nil {
		return s
	}
	var b strings.Builder
	for i := range len(s) {
		switch {
		case !hidden[i]:
			b.WriteByte(s[i])
		case i == 0 || !hidden[i-1]:
			b.WriteString("[REDACTED]")
		}
	}
	return b.String()
}

// Scrub returns s with apiKey and the values of headers replaced
// ([Redact]), cut to at most n bytes ([Truncate]). It redacts before it
// cuts, so that no start of a secret the cut would split is left.
func Scrub(s string, n int, apiKey string, headers http.Header) string {
	return Truncate(Redact(s, apiKey, headers), n)
}

// SetHeaders sets on h the headers of a JSON request to an
// OpenAI-compatible endpoint: the extra headers, JSON content type and
// accept, and the API key as a bearer token when there is one.
func SetHeaders(h http.Header, apiKey string, extra http.Header) {
	for name, vals := range extra {
		h[http.CanonicalHeaderKey(name)] = vals
	}
	h.Set("Content-Type", "application/json")
	h.Set("Accept", "application/json")
	if apiKey != "" {
		h.Set("Authorization", "Bearer "+apiKey)
	}
}

// Truncate cuts s to at most n bytes without splitting a UTF-8 sequence.
func Truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}
