package x402_test

import (
	"errors"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/hashicorp/go-retryablehttp"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/vouchkit/vouch/internal/telemetry/telemetrytest"
	"github.com/vouchkit/vouch/x402"
)

// observedPayer is a Transport paying with payer whose spans and metrics
// are recorded in memory.
type observedPayer struct {
	*telemetrytest.Recorder
	tr *x402.Transport
}

func newObservedPayer(t *testing.T, payer x402.Payer) *observedPayer {
	t.Helper()
	rec := telemetrytest.New(t)
	return &observedPayer{rec, &x402.Transport{Payer: payer, TracerProvider: rec.TracerProvider, MeterProvider: rec.MeterProvider}}
}

// payments returns the points of vouch.x402.client.payments by their
// attributes, "key=value" joined by commas.
func (o *observedPayer) payments(t *testing.T) map[string]int64 {
	t.Helper()
	if points := o.Points(t)["vouch.x402.client.payments"]; points != nil {
		return points
	}
	return map[string]int64{}
}

// paySpans returns the x402.pay spans ended so far.
func (o *observedPayer) paySpans() []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range o.Spans.GetSpans().Snapshots() {
		if s.Name() == "x402.pay" {
			out = append(out, s)
		}
	}
	return out
}

func attrs(s sdktrace.ReadOnlySpan) map[string]string {
	out := map[string]string{}
	for _, a := range s.Attributes() {
		out[string(a.Key)] = a.Value.String()
	}
	return out
}

// spanOf records the span of the context of each request it sends.
type spanOf struct {
	base  http.RoundTripper
	spans []trace.SpanContext
}

func (s *spanOf) RoundTrip(req *http.Request) (*http.Response, error) {
	s.spans = append(s.spans, trace.SpanContextFromContext(req.Context()))
	return s.base.RoundTrip(req)
}

func TestTransport_telemetrySettled(t *testing.T) {
	ps := newPaidServer(t, serverOptions{}, echo)
	o := newObservedPayer(t, newPayer(t))
	base := &spanOf{base: http.DefaultTransport}
	o.tr.Base = base
	ctx, parent := o.TracerProvider.Tracer("test").Start(t.Context(), "caller")
	resp, err := post(t, ctx, &http.Client{Transport: o.tr}, ps.URL, "hello")
	parent.End()
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()

	spans := o.paySpans()
	if len(spans) != 1 {
		t.Fatalf("%d x402.pay spans, want 1", len(spans))
	}
	s := spans[0]
	if s.Parent().SpanID() != parent.SpanContext().SpanID() || s.SpanContext().TraceID() != parent.SpanContext().TraceID() {
		t.Errorf("x402.pay parent = %v, want the caller's span %v", s.Parent().SpanID(), parent.SpanContext().SpanID())
	}
	got := attrs(s)
	if !strings.HasPrefix(got["vouch.payment.id"], "pay_") {
		t.Errorf("vouch.payment.id = %q, want a pay_ id", got["vouch.payment.id"])
	}
	delete(got, "vouch.payment.id")
	want := map[string]string{
		"vouch.payment.network":     "eip155:84532",
		"vouch.payment.scheme":      "exact",
		"vouch.payment.amount":      "1000",
		"vouch.payment.asset":       offer(t).Asset,
		"vouch.payment.reused":      "false",
		"vouch.payment.result":      "settled",
		"http.response.status_code": "200",
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("x402.pay attributes (-want +got):\n%s", diff)
	}
	// The first request runs in the caller's span, the paid one in x402.pay.
	if len(base.spans) != 2 || base.spans[0].SpanID() != parent.SpanContext().SpanID() || base.spans[1].SpanID() != s.SpanContext().SpanID() {
		t.Errorf("requests sent in spans %v, want the caller's then x402.pay's", base.spans)
	}
	wantCounts := map[string]int64{
		"vouch.payment.network=eip155:84532,vouch.payment.result=settled,vouch.payment.reused=false": 1,
	}
	if diff := cmp.Diff(wantCounts, o.payments(t)); diff != "" {
		t.Errorf("vouch.x402.client.payments (-want +got):\n%s", diff)
	}
}

func TestTransport_telemetryDeclinedByReason(t *testing.T) {
	ps := newPaidServer(t, serverOptions{}, echo)
	payer := newPayer(t)
	o := newObservedPayer(t, payer)
	o.tr.Budget = x402.NewBudget(1500)
	c := &http.Client{Transport: o.tr}
	resp, err := post(t, t.Context(), c, ps.URL, "one")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if _, err := post(t, t.Context(), c, ps.URL, "two"); !errors.Is(err, x402.ErrBudgetExceeded) {
		t.Fatalf("second call: err = %v, want ErrBudgetExceeded", err)
	}
	o.tr.Policy = x402.Policy{MaxAmount: 999} // no call is in flight
	if _, err := post(t, t.Context(), c, ps.URL, "three"); !errors.Is(err, x402.ErrNoAcceptableOffer) {
		t.Fatalf("third call: err = %v, want ErrNoAcceptableOffer", err)
	}
	want := map[string]int64{
		"vouch.payment.network=eip155:84532,vouch.payment.result=settled,vouch.payment.reused=false":        1,
		"vouch.payment.reason=budget_exceeded,vouch.payment.result=declined,vouch.payment.reused=false":     1,
		"vouch.payment.reason=no_acceptable_offer,vouch.payment.result=declined,vouch.payment.reused=false": 1,
	}
	if diff := cmp.Diff(want, o.payments(t)); diff != "" {
		t.Errorf("vouch.x402.client.payments (-want +got):\n%s", diff)
	}
	if n := payer.n.Load(); n != 1 {
		t.Errorf("payer signed %d payments, want 1", n)
	}
	spans := o.paySpans()
	if len(spans) != 3 {
		t.Fatalf("%d x402.pay spans, want 3", len(spans))
	}
	for i, reason := range []string{"", "budget_exceeded", "no_acceptable_offer"} {
		if got := attrs(spans[i])["vouch.payment.reason"]; got != reason {
			t.Errorf("span %d: vouch.payment.reason = %q, want %q", i, got, reason)
		}
		if failed := spans[i].Status().Code == codes.Error; failed != (reason != "") {
			t.Errorf("span %d: status %v, want an error status only when declined", i, spans[i].Status())
		}
	}
	if _, ok := attrs(spans[1])["vouch.payment.amount"]; ok {
		t.Error("a declined payment's span names an amount")
	}
}

func TestTransport_telemetryRejected(t *testing.T) {
	ps := newPaidServer(t, serverOptions{}, echo)
	payer := newPayer(t)
	payer.Now = func() time.Time { return time.Now().Add(-2 * time.Hour) } // the authorization expired long ago
	o := newObservedPayer(t, payer)
	if _, err := post(t, t.Context(), &http.Client{Transport: o.tr}, ps.URL, "x"); !errors.Is(err, x402.ErrPaymentRejected) {
		t.Fatalf("err = %v, want ErrPaymentRejected", err)
	}
	want := map[string]int64{
		"vouch.payment.network=eip155:84532,vouch.payment.reason=payment_rejected,vouch.payment.result=rejected,vouch.payment.reused=false": 1,
	}
	if diff := cmp.Diff(want, o.payments(t)); diff != "" {
		t.Errorf("vouch.x402.client.payments (-want +got):\n%s", diff)
	}
	if spans := o.paySpans(); len(spans) != 1 || attrs(spans[0])["http.response.status_code"] != "" {
		t.Errorf("spans = %d, want one x402.pay without a status code (the 402 is an error)", len(spans))
	}
}

// TestTransport_telemetryReusedProof: a retry of a keyed call carries the
// proof of its first attempt, which the server answered 503 without
// settling; the retry's span and count say so.
func TestTransport_telemetryReusedProof(t *testing.T) {
	var calls int
	ps := newPaidServer(t, serverOptions{}, func(w http.ResponseWriter, r *http.Request) {
		calls++ // handlers of one test run one after the other
		if calls == 1 {
			http.Error(w, "busy", http.StatusServiceUnavailable)
			return
		}
		echo(w, r)
	})
	payer := newPayer(t)
	o := newObservedPayer(t, payer)
	rc := retryablehttp.NewClient()
	rc.Logger = nil
	rc.RetryWaitMin, rc.RetryWaitMax, rc.RetryMax = time.Millisecond, time.Millisecond, 3
	rc.HTTPClient.Transport = o.tr
	req, err := retryablehttp.NewRequestWithContext(x402.WithPaymentKey(t.Context(), "call-7"), http.MethodPost, ps.URL+"/paid", strings.NewReader("again"))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := rc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	want := map[string]int64{
		"vouch.payment.network=eip155:84532,vouch.payment.result=answered,vouch.payment.reused=false": 1,
		"vouch.payment.network=eip155:84532,vouch.payment.result=settled,vouch.payment.reused=true":   1,
	}
	if diff := cmp.Diff(want, o.payments(t)); diff != "" {
		t.Errorf("vouch.x402.client.payments (-want +got):\n%s", diff)
	}
	spans := o.paySpans()
	if len(spans) != 2 || attrs(spans[0])["vouch.payment.id"] != attrs(spans[1])["vouch.payment.id"] {
		t.Errorf("want two x402.pay spans of one payment id, got %d", len(spans))
	}
	if n := payer.n.Load(); n != 1 {
		t.Errorf("payer signed %d payments, want 1", n)
	}
}

// TestTransport_telemetryFreeRequest: a request that is not answered 402
// gets no x402.pay span and no count.
func TestTransport_telemetryFreeRequest(t *testing.T) {
	ps := newPaidServer(t, serverOptions{}, echo)
	o := newObservedPayer(t, newPayer(t))
	resp, err := (&http.Client{Transport: o.tr}).Get(ps.URL + "/free")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if n := len(o.paySpans()); n != 0 {
		t.Errorf("%d x402.pay spans, want none", n)
	}
	if got := o.payments(t); len(got) != 0 {
		t.Errorf("vouch.x402.client.payments = %v, want nothing", got)
	}
}

// TestTransport_telemetryConcurrentCallOnePayment: concurrent requests of
// one logical call share one proof; one span says it made the proof, the
// others that they reused it.
func TestTransport_telemetryConcurrentCallOnePayment(t *testing.T) {
	ps := newPaidServer(t, serverOptions{next: &keeper{}}, nil)
	payer := newPayer(t)
	o := newObservedPayer(t, payer)
	c := &http.Client{Transport: o.tr}
	const n = 8
	var wg sync.WaitGroup
	start := make(chan struct{})
	for range n {
		wg.Go(func() {
			<-start
			// A copy that reaches the server while the first is in
			// flight may be refused as already used: only the
			// payments made count, not each copy's answer.
			_, _ = keyedPost(t, c, ps.URL, "call-1")
		})
	}
	close(start)
	wg.Wait()
	byReuse := map[string]int64{}
	for k, v := range o.payments(t) {
		_, reused, _ := strings.Cut(k, "vouch.payment.reused=")
		byReuse[reused] += v
	}
	if diff := cmp.Diff(map[string]int64{"false": 1, "true": n - 1}, byReuse); diff != "" {
		t.Errorf("vouch.x402.client.payments by vouch.payment.reused (-want +got):\n%s", diff)
	}
	if got := payer.n.Load(); got != 1 {
		t.Errorf("paid %d times, want 1", got)
	}
	ids := map[string]bool{}
	for _, s := range o.paySpans() {
		ids[attrs(s)["vouch.payment.id"]] = true
	}
	if len(ids) != 1 || len(o.paySpans()) != n {
		t.Errorf("%d x402.pay spans of %d payment ids, want %d of one", len(o.paySpans()), len(ids), n)
	}
}
