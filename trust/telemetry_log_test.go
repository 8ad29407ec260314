package trust_test

import (
	"context"
	"errors"
	"testing"

	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/vouchkit/vouch/internal/telemetry/telemetrytest"
	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/trust"
)

// receiptSpans runs calls calls that ask for a receipt on a service
// issuing into store, and returns the spans recorded.
func receiptSpans(t *testing.T, store receipt.Store, calls int) ([]sdktrace.ReadOnlySpan, []error) {
	t.Helper()
	rec := telemetrytest.New(t)
	spans, tp := rec.Spans, rec.TracerProvider
	issuer := &receipt.Issuer{Store: store}
	s, err := trust.New(newEngine(t, honest(0.95)), trust.WithReceipts(issuer), trust.WithTelemetry(tp, nil))
	if err != nil {
		t.Fatal(err)
	}
	var errs []error
	for range calls {
		req := request(trust.ModeValidation, trust.PolicyFast)
		req.Receipt = receipt.Request{Mode: receipt.DeliveryDetached}
		_, err := s.Call(context.Background(), req)
		errs = append(errs, err)
	}
	if issuer.Store != store {
		t.Error("trust.New changed the caller's Issuer")
	}
	return spans.GetSpans().Snapshots(), errs
}

func named(spans []sdktrace.ReadOnlySpan, name string) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range spans {
		if s.Name() == name {
			out = append(out, s)
		}
	}
	return out
}

func attr(s sdktrace.ReadOnlySpan, key string) string {
	for _, a := range s.Attributes() {
		if string(a.Key) == key {
			return a.Value.String()
		}
	}
	return ""
}

// TestService_telemetryLogAppend: storing a receipt in a store that keeps
// a log is a child span of receipt.issue, naming the receipt and its leaf.
func TestService_telemetryLogAppend(t *testing.T) {
	spans, errs := receiptSpans(t, &receipt.MemStore{}, 2)
	for _, err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	issues, appends := named(spans, "receipt.issue"), named(spans, "receipt.log_append")
	if len(issues) != 2 || len(appends) != 2 {
		t.Fatalf("%d receipt.issue and %d receipt.log_append spans, want 2 and 2", len(issues), len(appends))
	}
	for i, a := range appends {
		issue := issues[i]
		if a.Parent().SpanID() != issue.SpanContext().SpanID() {
			t.Errorf("append %d: parent %v, want receipt.issue %v", i, a.Parent().SpanID(), issue.SpanContext().SpanID())
		}
		if id := attr(a, "vouch.receipt.id"); id == "" || id != attr(issue, "vouch.receipt.id") {
			t.Errorf("append %d: vouch.receipt.id = %q, want receipt.issue's %q", i, id, attr(issue, "vouch.receipt.id"))
		}
		if got, want := attr(a, "vouch.receipt.log_index"), []string{"0", "1"}[i]; got != want {
			t.Errorf("append %d: vouch.receipt.log_index = %q, want %q", i, got, want)
		}
	}
}

// storeOnly hides the log of the store it holds.
type storeOnly struct{ receipt.Store }

// failingPut keeps a log but fails to store.
type failingPut struct{ *receipt.MemStore }

var errDiskFull = errors.New("disk full")

func (failingPut) Put(context.Context, receipt.Record) error { return errDiskFull }

// TestService_telemetryLogAppendOnlyWithLog: a store without a log gets
// no append span; a failing store's append span is an error.
func TestService_telemetryLogAppendOnlyWithLog(t *testing.T) {
	spans, errs := receiptSpans(t, storeOnly{&receipt.MemStore{}}, 1)
	if errs[0] != nil {
		t.Fatal(errs[0])
	}
	if n, m := len(named(spans, "receipt.issue")), len(named(spans, "receipt.log_append")); n != 1 || m != 0 {
		t.Errorf("without a log: %d receipt.issue and %d receipt.log_append spans, want 1 and 0", n, m)
	}

	spans, errs = receiptSpans(t, failingPut{&receipt.MemStore{}}, 1)
	if errs[0] == nil {
		t.Fatal("a call whose receipt could not be stored succeeded")
	}
	appends := named(spans, "receipt.log_append")
	if len(appends) != 1 || appends[0].Status().Code != codes.Error || attr(appends[0], "vouch.receipt.log_index") != "" {
		t.Errorf("failing store: append spans %d, want one with an error status and no index", len(appends))
	}
}
