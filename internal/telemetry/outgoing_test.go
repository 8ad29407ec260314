package telemetry_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/internal/telemetry"
	"github.com/vouchkit/vouch/internal/traceparent"
)

// TestOutgoing_parentAsItCame: with no span of the library's own (telemetry
// off), a request made in the trace of a request that came with a
// traceparent sends that traceparent as it came, its parent id and flags,
// and its tracestate, unless the tracestate is invalid; a request in a
// trace the library started (no parent) is sampled with a new parent id
// and no tracestate; a span started from the carried parent keeps the
// parent's tracestate.
func TestOutgoing_parentAsItCame(t *testing.T) {
	const id, parent = "0af7651916cd43dd8448eb211c80319c", "b7ad6b7169203331"
	type out struct{ Traceparent, Tracestate string }
	for _, tt := range []struct {
		name  string
		ctx   context.Context
		want  out
		fresh bool // a new parent id, sampled
	}{
		{"sampled", traceparent.WithParent(context.Background(), traceparent.Parent{TraceID: id, ParentID: parent, Flags: traceparent.FlagSampled, State: "congo=t61rcWkgMzE"}),
			out{"00-" + id + "-" + parent + "-01", "congo=t61rcWkgMzE"}, false},
		{"not sampled, random", traceparent.WithParent(context.Background(), traceparent.Parent{TraceID: id, ParentID: parent, Flags: traceparent.FlagRandom}),
			out{"00-" + id + "-" + parent + "-02", ""}, false},
		{"invalid tracestate", traceparent.WithParent(context.Background(), traceparent.Parent{TraceID: id, ParentID: parent, State: "=not a list member"}),
			out{"00-" + id + "-" + parent + "-00", ""}, false},
		{"no parent", traceparent.With(context.Background(), id), out{}, true},
	} {
		got := out{telemetry.Outgoing(tt.ctx), telemetry.OutgoingState(tt.ctx)}
		if tt.fresh {
			if p, ok := traceparent.Decode(got.Traceparent); !ok || p.TraceID != id || p.ParentID == parent || !p.Sampled() || got.Tracestate != "" {
				t.Errorf("%s: %+v, want trace %s, a new parent id, sampled, no tracestate", tt.name, got, id)
			}
			continue
		}
		if diff := cmp.Diff(tt.want, got); diff != "" {
			t.Errorf("%s (-want +got):\n%s", tt.name, diff)
		}
	}

	tr, _ := newTracer(t)
	p := traceparent.Parent{TraceID: id, ParentID: parent, Flags: traceparent.FlagSampled, State: "congo=t61rcWkgMzE"}
	ctx, span := telemetry.Start(traceparent.WithParent(context.Background(), p), tr, "s")
	defer span.End()
	if got := telemetry.OutgoingState(ctx); got != p.State {
		t.Errorf("under a span started from the carried parent: tracestate %q, want the parent's %q", got, p.State)
	}
}
