package traceparent_test

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/vouchkit/vouch/internal/telemetry"
	"github.com/vouchkit/vouch/internal/traceparent"
)

// FuzzParse checks every value Decode accepts against W3C Trace Context
// (Levels 1 and 2), and compares it with OpenTelemetry's extractor
// (propagation.TraceContext) and with the project's own
// (telemetry.TraceContext), which the server span's parent comes from.
// The seed corpus is in testdata/fuzz/FuzzParse.
func FuzzParse(f *testing.F) {
	f.Fuzz(func(t *testing.T, v string) {
		p, ok := traceparent.Decode(v)
		if id, parent, ok2 := traceparent.Parse(v); ok2 != ok || id != p.TraceID || parent != p.ParentID {
			t.Fatalf("Parse(%q) = %q, %q, %v; Decode = %+v, %v", v, id, parent, ok2, p, ok)
		}
		s := strings.Trim(v, " \t") // HTTP's optional white space
		if ok {
			checkSpec(t, s, p)
		} else if p != (traceparent.Parent{}) {
			t.Fatalf("Decode(%q) refused it but returned %+v", v, p)
		}

		// The project's extractor reads what Decode reads, and nothing else:
		// the server span's parent and the trace id the server carries agree.
		carrier := propagation.MapCarrier{traceparent.Header: v}
		own := trace.SpanContextFromContext(telemetry.TraceContext{}.Extract(context.Background(), carrier))
		if diff := cmp.Diff(parentOf(p, ok), parentOf(decoded(own))); diff != "" {
			t.Fatalf("telemetry.TraceContext and Decode read %q apart (-Decode +Extract):\n%s", v, diff)
		}

		// OpenTelemetry's extractor, given the value without its white
		// space (as net/http hands over a header), agrees but where it
		// departs from the specification.
		carrier = propagation.MapCarrier{traceparent.Header: s}
		otel := trace.SpanContextFromContext(propagation.TraceContext{}.Extract(context.Background(), carrier))
		switch {
		case ok && !otel.IsValid() && s[:2] == "00" && flagsOf(s)&^0x03 != 0:
			// Version 00 with a reserved flag bit set: the specification
			// has the bit ignored ("Other Flags": reserved for future use,
			// as Level 2 used 0x02); OpenTelemetry refuses the value.
		case !ok && otel.IsValid() && s[:2] == "00" && len(s) == 56 && s[55] == '-':
			// Version 00 is exactly 55 bytes; OpenTelemetry takes a
			// trailing "-" with no field after it.
		default:
			if diff := cmp.Diff(parentOf(p, ok), parentOf(decoded(otel))); diff != "" {
				t.Fatalf("OpenTelemetry and Decode read %q apart (-Decode +OpenTelemetry):\n%s", s, diff)
			}
		}
	})
}

// checkSpec checks a value s (white space trimmed) that Decode accepted
// as p against the specification.
func checkSpec(t *testing.T, s string, p traceparent.Parent) {
	t.Helper()
	if len(s) < 55 {
		t.Fatalf("%q accepted: shorter than 55 bytes", s)
	}
	version := s[:2]
	if !lowerHex(version) || version == "ff" {
		t.Fatalf("%q accepted: version %q", s, version)
	}
	if version == "00" && len(s) != 55 {
		t.Fatalf("%q accepted: version 00 is exactly 55 bytes, not %d", s, len(s))
	}
	if len(s) > 55 && s[55] != '-' {
		t.Fatalf("%q accepted: flags followed by %q, not the end or a dash", s, s[55])
	}
	if len(p.TraceID) != 32 || !lowerHex(p.TraceID) || strings.Trim(p.TraceID, "0") == "" {
		t.Fatalf("%q accepted: trace id %q", s, p.TraceID)
	}
	if len(p.ParentID) != 16 || !lowerHex(p.ParentID) || strings.Trim(p.ParentID, "0") == "" {
		t.Fatalf("%q accepted: parent id %q", s, p.ParentID)
	}
	if want := version + "-" + p.TraceID + "-" + p.ParentID + "-"; s[:53] != want {
		t.Fatalf("%q accepted as %+v: not its fields", s, p)
	}
	if !lowerHex(s[53:55]) {
		t.Fatalf("%q accepted: trace-flags %q", s, s[53:55])
	}
	if want := flagsOf(s) & (traceparent.FlagSampled | traceparent.FlagRandom); p.Flags != want {
		t.Fatalf("%q accepted with flags %02x, want %02x: sampled and random as given, the rest zero", s, p.Flags, want)
	}
}

// flagsOf returns the trace-flags byte of s, a value whose 54th and 55th
// bytes are they, or 0 when they are not hex.
func flagsOf(s string) byte {
	if len(s) < 55 {
		return 0
	}
	b, _ := strconv.ParseUint(s[53:55], 16, 8)
	return byte(b)
}

func lowerHex(s string) bool {
	return strings.Trim(s, "0123456789abcdef") == ""
}

// decoded returns sc as Decode would have returned it.
func decoded(sc trace.SpanContext) (traceparent.Parent, bool) {
	if !sc.IsValid() {
		return traceparent.Parent{}, false
	}
	return traceparent.Parent{TraceID: sc.TraceID().String(), ParentID: sc.SpanID().String(), Flags: byte(sc.TraceFlags())}, true
}

// parent is a decoded value or none, for comparison.
type parent struct {
	traceparent.Parent
	OK bool
}

func parentOf(p traceparent.Parent, ok bool) parent { return parent{p, ok} }
