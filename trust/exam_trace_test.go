package trust_test

import (
	"context"
	"net/http/httptest"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/internal/telemetry/telemetrytest"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/trust"
)

// TestClient_FeedbackVerdict_examInCallersTrace: a caller who reports
// in the trace of the call it reports on (its context carries the
// call's trace id, so the report's traceparent names it) gets the same
// exam as one who does not, when the trust service traces: the exam's
// oracle call is a call of its own, under a trace id of its own, not
// the reported call's.
func TestClient_FeedbackVerdict_examInCallersTrace(t *testing.T) {
	rec := telemetrytest.New(t)
	var runs atomic.Int64
	_, book, e := examEngine(t, &runs)
	s, err := trust.New(e, trust.WithSingleSession(2), trust.WithTelemetry(rec.TracerProvider, rec.MeterProvider))
	if err != nil {
		t.Fatal(err)
	}
	h, err := trust.NewHandler(s, trust.WithAuthenticator(router.KeyAuthenticator(map[string]string{"ka": "alice"})),
		trust.WithHandlerTelemetry(rec.TracerProvider, rec.MeterProvider))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(h)
	t.Cleanup(srv.Close)
	alice, err := trust.NewClient(srv.URL, trust.WithAPIKey("ka"), trust.WithRetry(router.RetryPolicy{}))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	req := request(trust.ModeValidation, trust.PolicyFast)
	resp, err := alice.Call(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	before := runs.Load()
	// The report continues the call's trace, as a caller that keeps one
	// trace id per task does.
	if err := alice.FeedbackVerdict(router.WithTraceID(ctx, resp.TraceID), resp.TraceID, router.VerdictInvalid); err != nil {
		t.Fatal(err)
	}
	if got := runs.Load() - before; got < 1 || got > 4 {
		t.Errorf("the exam ran %d runs, want 1 to 4", got)
	}
	scope := router.Scope(router.KindValidate, req.Task.Type)
	snap, err := book.Snapshot(ctx, scope, reputation.SnapshotRequest{Leader: []int64{1, 2, 3, 4, 5}})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(reputation.Lead{Session: 1, Won: 1}, snap.Records[0]); diff != "" {
		t.Errorf("after the report, session 1's record (-want +got):\n%s", diff)
	}
	for _, sp := range rec.Spans.GetSpans() {
		if sp.Name != "trust.call" {
			continue
		}
		for _, a := range sp.Attributes {
			if a.Key == "vouch.trust.exam" && a.Value.AsBool() && sp.SpanContext.TraceID().String() == resp.TraceID {
				t.Errorf("the exam's oracle call ran in the reported call's trace %s", resp.TraceID)
			}
		}
	}
}
