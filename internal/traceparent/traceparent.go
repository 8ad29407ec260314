// Package traceparent reads and writes W3C Trace Context "traceparent"
// headers and carries a trace id through a context.
package traceparent

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
)

// Header is the name of the W3C trace context header.
const Header = "traceparent"

// Trace flags that W3C Trace Context defines: sampled (Level 1) and
// random trace id (Level 2). The other bits of trace-flags are reserved:
// a value that sets them is read, their meaning ignored.
const (
	FlagSampled byte = 0x01
	FlagRandom  byte = 0x02
	knownFlags       = FlagSampled | FlagRandom
)

// Parent is a decoded traceparent value: the span that sent a request.
type Parent struct {
	TraceID  string // 32 lowercase hex digits, not all zero
	ParentID string // 16 lowercase hex digits, not all zero
	// Flags holds the trace flags the value sets among FlagSampled and
	// FlagRandom; the reserved bits are cleared, as the specification
	// has them set to zero when the value is passed on.
	Flags byte
	// State is the tracestate that came with the value, as received (the
	// request's tracestate headers joined by commas), "" for none. Decode
	// leaves it empty; it is the receiver's to set and to check.
	State string
}

// Sampled reports whether the sender flagged the request sampled.
func (p Parent) Sampled() bool { return p.Flags&FlagSampled != 0 }

// Decode decodes a traceparent value. It accepts version 00 exactly as
// the W3C specification writes it ("00-<32 hex>-<16 hex>-<2 hex>",
// 55 bytes) and a later version (01 to fe) whose value starts so and
// goes on, if at all, with "-" and fields it ignores. Whatever the
// version, trace-flags is read as a bit field: the bits the
// specification reserves are ignored, not refused, since a later level
// may define them at version 00 as Level 2 defined the random trace id
// flag. ok is false for a malformed value, version ff, or an all-zero
// id, which the specification says to ignore. Only HTTP's optional
// white space (SP and HTAB) may surround the value; any other byte, such
// as U+00A0, makes it malformed.
func Decode(v string) (p Parent, ok bool) {
	parts := strings.Split(strings.Trim(v, " \t"), "-")
	if len(parts) < 4 || parts[0] == "ff" || len(parts[0]) != 2 || !isHex(parts[0]) {
		return Parent{}, false
	}
	if parts[0] == "00" && len(parts) != 4 {
		return Parent{}, false
	}
	traceID, parentID, flags := parts[1], parts[2], parts[3]
	if len(traceID) != 32 || len(parentID) != 16 || len(flags) != 2 ||
		!isHex(traceID) || !isHex(parentID) || !isHex(flags) ||
		allZero(traceID) || allZero(parentID) {
		return Parent{}, false
	}
	return Parent{TraceID: traceID, ParentID: parentID, Flags: (unhex(flags[0])<<4 | unhex(flags[1])) & knownFlags}, true
}

// Parse returns the trace id and parent id of a traceparent value, as
// [Decode] reads it.
func Parse(v string) (traceID, parentID string, ok bool) {
	p, ok := Decode(v)
	return p.TraceID, p.ParentID, ok
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
	return Parent{TraceID: traceID, ParentID: NewParentID(), Flags: FlagSampled}.String()
}

// String returns p as a traceparent value of version 00:
// "00-<trace id>-<parent id>-<flags>". State is not part of it.
func (p Parent) String() string {
	return "00-" + p.TraceID + "-" + p.ParentID + "-" + hex.EncodeToString([]byte{p.Flags})
}

// NewParentID returns a random parent (span) id: 16 lowercase hex digits.
func NewParentID() string { return randomHex(8) }

// NewTraceID returns a random trace id: 32 lowercase hex digits.
func NewTraceID() string { return randomHex(16) }

// Valid reports whether id is a well-formed, non-zero trace id.
func Valid(id string) bool { return len(id) == 32 && isHex(id) && !allZero(id) }

type key struct{}

// carried is what a context carries: a trace id, and the parent that
// named it when it came with a request's traceparent.
type carried struct {
	id     string
	parent Parent // zero unless id came with it
}

// With returns a context carrying traceID, without a parent.
func With(ctx context.Context, traceID string) context.Context {
	return context.WithValue(ctx, key{}, carried{id: traceID})
}

// WithParent returns a context carrying p's trace id and p itself, the
// parent a request's traceparent named, so that a span started in it
// without a span to be the child of is the child of p, with p's flags.
func WithParent(ctx context.Context, p Parent) context.Context {
	return context.WithValue(ctx, key{}, carried{id: p.TraceID, parent: p})
}

// From returns the trace id carried by ctx, or "".
func From(ctx context.Context) string {
	c, _ := ctx.Value(key{}).(carried)
	return c.id
}

// Check returns an error naming the trace id ctx carries when it is not
// a well-formed, non-zero trace id ([Valid]), which no traceparent can
// carry, and nil when ctx carries a valid one or none. A call made under
// such a context is refused with it rather than run under another id.
func Check(ctx context.Context) error {
	if id := From(ctx); id != "" && !Valid(id) {
		return fmt.Errorf("trace id %q (router.WithTraceID) is not a W3C trace id, 32 lowercase hex digits not all zero", id)
	}
	return nil
}

// ParentFrom returns the parent ctx carries with its trace id
// ([WithParent]), or ok false when its trace id came without one.
func ParentFrom(ctx context.Context) (p Parent, ok bool) {
	c, _ := ctx.Value(key{}).(carried)
	return c.parent, c.parent.TraceID != ""
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

// unhex returns the value of the lowercase hex digit c.
func unhex(c byte) byte {
	if c <= '9' {
		return c - '0'
	}
	return c - 'a' + 10
}

func allZero(s string) bool { return strings.Trim(s, "0") == "" }
