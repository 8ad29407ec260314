package traceparent

import (
	"context"
	"net/http"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestParse(t *testing.T) {
	const trace, parent = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	tests := []struct {
		in     string
		ok     bool
		reason string
	}{
		{"00-" + trace + "-" + parent + "-01", true, "the W3C example"},
		{" 00-" + trace + "-" + parent + "-00 ", true, "surrounding space"},
		{"\t00-" + trace + "-" + parent + "-00\t ", true, "surrounding tabs"},
		{"00-" + trace + "-" + parent + "-01\u00a0", false, "a trailing U+00A0: 57 bytes, not 55"},
		{"\u008500-" + trace + "-" + parent + "-01", false, "a leading U+0085"},
		{"\v00-" + trace + "-" + parent + "-01\f", false, "vertical tab and form feed are no HTTP white space"},
		{"00-" + trace + "-" + parent + "-01\n", false, "a trailing newline"},
		{"01-" + trace + "-" + parent + "-01-extra", true, "a later version may add fields"},
		{"00-" + trace + "-" + parent + "-01-extra", false, "version 00 has exactly four fields"},
		{"ff-" + trace + "-" + parent + "-01", false, "version ff is invalid"},
		{"00-" + strings.Repeat("0", 32) + "-" + parent + "-01", false, "all-zero trace id"},
		{"00-" + trace + "-" + strings.Repeat("0", 16) + "-01", false, "all-zero parent id"},
		{"00-" + strings.ToUpper(trace) + "-" + parent + "-01", false, "upper-case hex"},
		{"00-" + trace[:31] + "-" + parent + "-01", false, "short trace id"},
		{"00-" + trace + "-" + parent + "-1", false, "short flags"},
		{"", false, "empty"},
	}
	for _, tt := range tests {
		gotTrace, gotParent, ok := Parse(tt.in)
		if ok != tt.ok {
			t.Errorf("%s: Parse(%q) ok = %v, want %v", tt.reason, tt.in, ok, tt.ok)
			continue
		}
		if ok && (gotTrace != trace || gotParent != parent) {
			t.Errorf("%s: Parse(%q) = %q, %q", tt.reason, tt.in, gotTrace, gotParent)
		}
	}
}

// TestDecodeFlags: trace-flags is a bit field; Decode keeps the flags W3C
// Trace Context defines, sampled and random trace id, and ignores the
// reserved bits, at version 00 as at a later version.
func TestDecodeFlags(t *testing.T) {
	const trace, parent = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	for _, tt := range []struct {
		in      string
		flags   byte
		sampled bool
	}{
		{"00-" + trace + "-" + parent + "-00", 0, false},
		{"00-" + trace + "-" + parent + "-01", FlagSampled, true},
		{"00-" + trace + "-" + parent + "-02", FlagRandom, false},
		{"00-" + trace + "-" + parent + "-03", FlagSampled | FlagRandom, true},
		{"00-" + trace + "-" + parent + "-04", 0, false},
		{"00-" + trace + "-" + parent + "-09", FlagSampled, true},
		{"00-" + trace + "-" + parent + "-fe", FlagRandom, false},
		{"00-" + trace + "-" + parent + "-ff", FlagSampled | FlagRandom, true},
		{"cc-" + trace + "-" + parent + "-fd-future", FlagSampled, true},
	} {
		p, ok := Decode(tt.in)
		want := Parent{TraceID: trace, ParentID: parent, Flags: tt.flags}
		if diff := cmp.Diff(want, p); !ok || diff != "" {
			t.Errorf("Decode(%q) ok %v (-want +got):\n%s", tt.in, ok, diff)
		}
		if p.Sampled() != tt.sampled {
			t.Errorf("Decode(%q).Sampled() = %v, want %v", tt.in, p.Sampled(), tt.sampled)
		}
	}
}

func TestFormatAndNew(t *testing.T) {
	id := NewTraceID()
	if !Valid(id) {
		t.Fatalf("NewTraceID() = %q, not a valid trace id", id)
	}
	if NewTraceID() == id {
		t.Error("two calls of NewTraceID gave the same id")
	}
	got, _, ok := Parse(Format(id))
	if !ok || got != id {
		t.Errorf("Parse(Format(%q)) = %q, %v", id, got, ok)
	}
}

func TestContext(t *testing.T) {
	ctx := context.Background()
	if From(ctx) != "" {
		t.Errorf("From(empty context) = %q", From(ctx))
	}
	if got := From(With(ctx, "abc")); got != "abc" {
		t.Errorf("From(With(ctx, abc)) = %q", got)
	}
}

// TestWithParent: a context carries the parent a traceparent named with
// its trace id, until a trace id is set without one.
func TestWithParent(t *testing.T) {
	p := Parent{TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", ParentID: "00f067aa0ba902b7", Flags: FlagRandom}
	ctx := WithParent(context.Background(), p)
	if got, ok := ParentFrom(ctx); !ok || got != p || From(ctx) != p.TraceID {
		t.Errorf("ParentFrom(WithParent(p)) = %+v, %v; From = %q; want %+v", got, ok, From(ctx), p)
	}
	ctx = With(ctx, "0af7651916cd43dd8448eb211c80319c")
	if got, ok := ParentFrom(ctx); ok {
		t.Errorf("ParentFrom after With = %+v, want none", got)
	}
	if _, ok := ParentFrom(context.Background()); ok {
		t.Error("ParentFrom(empty context) found a parent")
	}
}

func TestOf(t *testing.T) {
	const v = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	for _, tt := range []struct {
		h    http.Header
		want string
		ok   bool
	}{
		{nil, "", false},
		{http.Header{}, "", false},
		{http.Header{"Traceparent": {""}}, "", false},
		{http.Header{"Traceparent": {v}}, v, true},
		{http.Header{"Traceparent": {v, v}}, "", false}, // several: a new trace
	} {
		if got, ok := Of(tt.h); got != tt.want || ok != tt.ok {
			t.Errorf("Of(%v) = %q, %v; want %q, %v", tt.h, got, ok, tt.want, tt.ok)
		}
	}
}

// TestParent_String: a parent written with String decodes to itself
// (State aside), and Format's value is sampled with a fresh parent id.
func TestParent_String(t *testing.T) {
	for _, flags := range []byte{0, FlagSampled, FlagRandom, FlagSampled | FlagRandom} {
		p := Parent{TraceID: "4bf92f3577b34da6a3ce929d0e0e4736", ParentID: NewParentID(), Flags: flags}
		if got, ok := Decode(p.String()); !ok || got != p {
			t.Errorf("Decode(%q) = %+v, %v; want %+v", p.String(), got, ok, p)
		}
	}
	a, _ := Decode(Format("4bf92f3577b34da6a3ce929d0e0e4736"))
	b, _ := Decode(Format("4bf92f3577b34da6a3ce929d0e0e4736"))
	if !a.Sampled() || a.ParentID == b.ParentID {
		t.Errorf("Format gave %+v and %+v; want sampled, each with its own parent id", a, b)
	}
}
