// Package traceparent reads and writes W3C Trace Context "traceparent"
// headers and carries a trace id through a context.
package traceparent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/http"
	"strings"
)

// Header is the name of the W3C trace context header.
const Header = "traceparent"

// Parse returns the trace id and parent id of a traceparent value of
// version 00 ("00-<32 hex>-<16 hex>-<2 hex>", exactly 55 bytes). ok is
// false for a malformed value or an all-zero id, which the W3C
// specification says to ignore. Only HTTP's optional white space (SP and
// HTAB) may surround the value; any other byte, such as U+00A0, makes it
// malformed.
func Parse(v string) (traceID, parentID string, ok bool) {
	parts := strings.Split(strings.Trim(v, " \t"), "-")
	if len(parts) < 4 || parts[0] == "ff" || len(parts[0]) != 2 || !isHex(parts[0]) {
		return "", "", false
	}
	if parts[0] == "00" && len(parts) != 4 {
		return "", "", false
	}
	traceID, parentID = parts[1], parts[2]
	if len(traceID) != 32 || len(parentID) != 16 || len(parts[3]) != 2 ||
		!isHex(traceID) || !isHex(parentID) || !isHex(parts[3]) ||
		allZero(traceID) || allZero(parentID) {
		return "", "", false
	}
	return traceID, parentID, true
}

// Of returns the traceparent value of h, or ok false when h holds none or
// more than one: the W3C specification has a request with several start
// a new trace, as it cannot tell which names its parent.
func Of(h http.Header) (value string, ok bool) {
	vals := h.Values(Header)
	if len(vals) != 1 || vals[0] == "" {
		return "", false
	}
	return vals[0], true
}

// Format returns a traceparent value for traceID with a fresh parent id,
// sampled.
func Format(traceID string) string {
	return "00-" + traceID + "-" + randomHex(8) + "-01"
}

// NewTraceID returns a random trace id: 32 lowercase hex digits.
func NewTraceID() string { return randomHex(16) }

// Valid reports whether id is a well-formed, non-zero trace id.
func Valid(id string) bool { return len(id) == 32 && isHex(id) && !allZero(id) }

type key struct{}

// With returns a context carrying traceID.
func With(ctx context.Context, traceID string) context.Context {
	return context.WithValue(ctx, key{}, traceID)
}

// From returns the trace id carried by ctx, or "".
func From(ctx context.Context) string {
	id, _ := ctx.Value(key{}).(string)
	return id
}

func randomHex(n int) string {
	b := make([]byte, n)
	rand.Read(b) // never fails (crypto/rand, Go 1.24+)
	return hex.EncodeToString(b)
}

func isHex(s string) bool {
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'f') {
			return false
		}
	}
	return true
}

func allZero(s string) bool { return strings.Trim(s, "0") == "" }
