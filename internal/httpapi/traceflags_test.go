package httpapi_test

import (
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/vouchkit/vouch/internal/httpapi"
	"github.com/vouchkit/vouch/internal/telemetry/telemetrytest"
)

// parentSampler samples as the SDK does by default,
// ParentBased(AlwaysSample), and keeps the parent each span was started
// under.
type parentSampler struct {
	mu      sync.Mutex
	parents []trace.SpanContext
}

func (s *parentSampler) ShouldSample(p sdktrace.SamplingParameters) sdktrace.SamplingResult {
	s.mu.Lock()
	s.parents = append(s.parents, trace.SpanContextFromContext(p.ParentContext))
	s.mu.Unlock()
	return sdktrace.ParentBased(sdktrace.AlwaysSample()).ShouldSample(p)
}

func (s *parentSampler) Description() string { return "parentSampler" }

// serverParent is what became of a request's traceparent: the parent its
// server span was started under, whether the span was recorded, and the
// flags of the traceparent echoed ("" for none).
type serverParent struct {
	Trace, Span string // "" for no parent: a new trace
	Flags       trace.TraceFlags
	Remote      bool
	Recorded    bool
	Echo        string
}

// TestServer_traceFlags sends, over loopback HTTP, a request with each
// kind of trace-flags and checks the parent of its server span: the span
// the traceparent names, with the flags W3C Trace Context defines
// (sampled, random trace id) as the caller set them, the reserved bits
// ignored at version 00 as at a later one; the sampler, the SDK's
// default, follows the caller's sampled bit.
func TestServer_traceFlags(t *testing.T) {
	const id, parent = "4bf92f3577b34da6a3ce929d0e0e4736", "00f067aa0ba902b7"
	joined := func(flags trace.TraceFlags, echo string) serverParent {
		return serverParent{Trace: id, Span: parent, Flags: flags, Remote: true, Recorded: flags.IsSampled(), Echo: echo}
	}
	newTrace := serverParent{Recorded: true} // a root, sampled by AlwaysSample
	tests := []struct {
		traceparent string
		want        serverParent
	}{
		{"00-" + id + "-" + parent + "-01", joined(trace.FlagsSampled, "01")},
		{"00-" + id + "-" + parent + "-00", joined(0, "00")},
		{"00-" + id + "-" + parent + "-02", joined(trace.FlagsRandom, "02")},
		{"00-" + id + "-" + parent + "-03", joined(trace.FlagsSampled|trace.FlagsRandom, "03")},
		// Reserved bits at version 00: ignored, the defined ones kept.
		{"00-" + id + "-" + parent + "-04", joined(0, "00")},
		{"00-" + id + "-" + parent + "-05", joined(trace.FlagsSampled, "01")},
		{"00-" + id + "-" + parent + "-fe", joined(trace.FlagsRandom, "02")},
		{"00-" + id + "-" + parent + "-ff", joined(trace.FlagsSampled|trace.FlagsRandom, "03")},
		// A later version is read as 00, its unknown flags and fields ignored.
		{"cc-" + id + "-" + parent + "-01-what-the-future-will-be-like", joined(trace.FlagsSampled, "01")},
		{"cc-" + id + "-" + parent + "-fc", joined(0, "00")},
		// Invalid: a new trace.
		{"00-" + id + "-" + parent + "-01-extra", newTrace},
		{"ff-" + id + "-" + parent + "-01", newTrace},
		{"00-" + id + "-" + parent + "-0x", newTrace},
		{"00-" + id + "-" + parent + "-1", newTrace},
	}
	for _, tc := range tests {
		t.Run(tc.traceparent, func(t *testing.T) {
			sampler := &parentSampler{}
			rec := telemetrytest.New(t, sdktrace.WithSampler(sampler))
			srv := newServer(t, httpapi.Config{
				Endpoints:      []httpapi.Endpoint{{Method: http.MethodPost, Path: "/echo", Access: httpapi.Public, Prepare: echo}},
				TracerProvider: rec.TracerProvider,
				MeterProvider:  rec.MeterProvider,
			})
			r := send(t, "POST", srv.URL+"/echo", `{}`, "traceparent", tc.traceparent)
			srv.Close() // waits for the handler: its span has ended
			if r.status != http.StatusOK {
				t.Fatalf("status %d: %s", r.status, r.body)
			}
			sampler.mu.Lock()
			defer sampler.mu.Unlock()
			if len(sampler.parents) != 1 {
				t.Fatalf("%d spans started, want the server span alone", len(sampler.parents))
			}
			p := sampler.parents[0]
			got := serverParent{Flags: p.TraceFlags(), Remote: p.IsRemote(), Recorded: len(rec.Spans.GetSpans()) == 1}
			if p.IsValid() {
				got.Trace, got.Span = p.TraceID().String(), p.SpanID().String()
			}
			if echoed := r.header.Get("traceparent"); echoed != "" {
				got.Echo = echoed[strings.LastIndexByte(echoed, '-')+1:]
			}
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("server span's parent (-want +got):\n%s", diff)
			}
			if spans := rec.Spans.GetSpans(); len(spans) == 1 && p.IsValid() {
				if sc := spans[0].SpanContext; sc.TraceID() != p.TraceID() || sc.TraceFlags() != p.TraceFlags() {
					t.Errorf("server span %s flags %s, want the parent's trace %s and flags %s",
						sc.TraceID(), sc.TraceFlags(), p.TraceID(), p.TraceFlags())
				}
			}
		})
	}
}
