package trust_test

import (
	"context"
	"errors"
	"net/http"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/internal/telemetry/telemetrytest"
	"github.com/vouchkit/vouch/problem"
	"github.com/vouchkit/vouch/receipt"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/reputation/reputationtest"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
	"github.com/vouchkit/vouch/trust/internal/routerfault"
)

// countingRuns returns w, counting its runs in n.
func countingRuns(w router.Worker, n *atomic.Int64) router.Worker {
	return router.WorkerFunc(func(ctx context.Context, job *router.Job) (*router.Result, error) {
		n.Add(1)
		return w.Work(ctx, job)
	})
}

// examEngine returns a store, a book over it and an engine over it of five sessions that
// count their runs in n: session 1 always answers INVALID, rightly, and
// sessions 2 to 5 always VALID.
func examEngine(t *testing.T, n *atomic.Int64) (*reputation.Memory, *reputation.Book, *router.Engine) {
	t.Helper()
	store := new(reputation.Memory)
	book, err := reputation.New(store, reputation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	right, wrong := countingRuns(verdictOf(router.VerdictInvalid), n), countingRuns(verdictOf(router.VerdictValid), n)
	e, err := router.NewEngine(routertest.Sessions(1, 1, right, wrong, wrong, wrong, wrong), router.WithReputation(book))
	if err != nil {
		t.Fatal(err)
	}
	return store, book, e
}

// TestService_exam: fast runs session 2 alone, which is wrong; each
// report of the true verdict examines the claim on the five sessions,
// asking them in a drawn order until two disagree and counting session
// 2's vote as cast, so session 1, which no call ran, wins a disagreement
// with the others asked before it on each, and leads after three. A repeat or the opposite verdict runs
// no exam again; another caller's report runs none, and without exams a
// report teaches the call's own votes only.
func TestService_exam(t *testing.T) {
	ctx := trust.WithCaller(context.Background(), "key:alice")
	var runs atomic.Int64
	store, book, e := examEngine(t, &runs)
	s, err := trust.New(e, trust.WithSingleSession(2))
	if err != nil {
		t.Fatal(err)
	}
	req := request(trust.ModeValidation, trust.PolicyFast)
	scope := router.Scope(router.KindValidate, req.Task.Type)
	ids := []int64{1, 2, 3, 4, 5}
	lead := func() reputation.Lead {
		t.Helper()
		snap, err := book.Snapshot(ctx, scope, reputation.SnapshotRequest{Leader: ids})
		if err != nil {
			t.Fatal(err)
		}
		return snap.Records[0]
	}
	var last string
	for i := range 3 {
		resp, err := s.Call(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.Status != trust.StatusValid || resp.Evidence.Launched != 1 {
			t.Fatalf("call %d: %s on %d runs, want VALID on one", i, resp.Status, resp.Evidence.Launched)
		}
		if _, ok, _ := book.Leader(ctx, scope, ids); ok {
			t.Fatalf("before report %d: a leader", i+1)
		}
		before := runs.Load()
		if err := s.FeedbackVerdict(ctx, resp.TraceID, router.VerdictInvalid); err != nil {
			t.Fatal(err)
		}
		if got := runs.Load() - before; got < 1 || got > 4 {
			t.Errorf("report %d: the exam ran %d runs, want 1 to 4: up to session 1, never session 2 again", i+1, got)
		}
		if diff := cmp.Diff(reputation.Lead{Session: 1, Won: float64(i + 1)}, lead()); diff != "" {
			t.Errorf("after report %d, session 1's record (-want +got):\n%s", i+1, diff)
		}
		last = resp.TraceID
	}
	if l, ok, err := book.Leader(ctx, scope, ids); err != nil || !ok || l.Session != 1 {
		t.Errorf("after three exams: leader %+v (%v, %v), want session 1", l, ok, err)
	}

	keys := make([]reputation.Key, len(ids))
	for i, id := range ids {
		keys[i] = reputation.Key{Session: id}
	}
	records := func() []reputation.Record { return reputationtest.Load(t, store, keys...) }
	after := records()
	before := runs.Load()
	if err := s.FeedbackVerdict(ctx, last, router.VerdictInvalid); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(after, records()); diff != "" {
		t.Errorf("a repeat moved the records (-once +twice):\n%s", diff)
	}
	bob := trust.WithCaller(context.Background(), "key:bob")
	if err := s.FeedbackVerdict(bob, last, router.VerdictValid); !errors.Is(err, trust.ErrUnknownCall) {
		t.Errorf("bob's report on alice's call: %v, want ErrUnknownCall", err)
	}
	if err := s.FeedbackVerdict(ctx, last, router.VerdictValid); err != nil {
		t.Fatal(err)
	}
	if got := records(); got[0].Right >= after[0].Right {
		t.Errorf("the opposite verdict left session 1 at %+v, want less right than %+v", got[0], after[0])
	}
	if got := runs.Load() - before; got != 0 {
		t.Errorf("a repeat, another caller's report and the opposite verdict ran %d runs, want none", got)
	}

	var offRuns atomic.Int64
	offStore, _, offEngine := examEngine(t, &offRuns)
	off, err := trust.New(offEngine, trust.WithSingleSession(2), trust.WithoutExams())
	if err != nil {
		t.Fatal(err)
	}
	resp, err := off.Call(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if err := off.FeedbackVerdict(ctx, resp.TraceID, router.VerdictInvalid); err != nil {
		t.Fatal(err)
	}
	if offRuns.Load() != 1 {
		t.Errorf("without exams: %d runs, want the call's one", offRuns.Load())
	}
	if recs := reputationtest.Load(t, offStore, keys[:1]...); recs[0] != (reputation.Record{}) {
		t.Errorf("without exams, session 1, which did not run, learned %+v", recs[0])
	}
}

// TestService_examErrors: a router that can never serve the oracle tier
// examines nothing and the report stands; an exam whose oracle call
// fails is ErrExam, the report standing, and the same report again runs
// it again.
func TestService_examErrors(t *testing.T) {
	ctx := context.Background()
	book, err := reputation.New(nil, reputation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w := verdictOf(router.VerdictValid)
	three, err := router.NewEngine(routertest.Sessions(1, 1, w, w, w), router.WithReputation(book))
	if err != nil {
		t.Fatal(err)
	}
	s, err := trust.New(three, trust.WithSingleSession(2))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := s.Call(ctx, request(trust.ModeValidation, trust.PolicyFast))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.FeedbackVerdict(ctx, resp.TraceID, router.VerdictValid); err != nil {
		t.Errorf("three sessions, no oracle tier: %v, want the report alone", err)
	}

	var runs atomic.Int64
	_, _, e := examEngine(t, &runs)
	down, err := trust.New(routerfault.OracleDown{Engine: e}, trust.WithSingleSession(2))
	if err != nil {
		t.Fatal(err)
	}
	resp, err = down.Call(ctx, request(trust.ModeValidation, trust.PolicyFast))
	if err != nil {
		t.Fatal(err)
	}
	for i := range 2 {
		if err := down.FeedbackVerdict(ctx, resp.TraceID, router.VerdictInvalid); !errors.Is(err, trust.ErrExam) || !errors.Is(err, routerfault.ErrOracleDown) {
			t.Errorf("report %d with the oracle tier down: %v, want ErrExam wrapping the router's error", i+1, err)
		}
	}
}

// TestClient_FeedbackVerdict_examFails: over POST /api/v4/feedback, an
// exam that fails is a 503 with code unavailable, the report standing.
func TestClient_FeedbackVerdict_examFails(t *testing.T) {
	var runs atomic.Int64
	store, _, e := examEngine(t, &runs)
	s, err := trust.New(routerfault.OracleDown{Engine: e}, trust.WithSingleSession(2))
	if err != nil {
		t.Fatal(err)
	}
	_, alice, _ := feedbackServer(t, s)
	ctx := context.Background()
	resp, err := alice.Call(ctx, request(trust.ModeValidation, trust.PolicyFast))
	if err != nil {
		t.Fatal(err)
	}
	key := []reputation.Key{{Session: 2}}
	before := reputationtest.Load(t, store, key...)
	err = alice.FeedbackVerdict(ctx, resp.TraceID, router.VerdictInvalid)
	asProblem(t, err, http.StatusServiceUnavailable, problem.CodeUnavailable)
	if after := reputationtest.Load(t, store, key...); after[0].Wrong <= before[0].Wrong {
		t.Errorf("session 2 voted VALID on an INVALID claim: record %+v, before %+v: the report did not stand", after[0], before[0])
	}
}

// TestService_examByReceipt: a report by receipt id examines the call
// its receipt names; where the caller reused the call's trace id for a
// later call on other sessions, the report lands on the receipt's call
// and examines nothing, since the request kept under that trace id is
// the later call's.
func TestService_examByReceipt(t *testing.T) {
	ctx := trust.WithCaller(context.Background(), "key:alice")
	var runs atomic.Int64
	_, _, e := examEngine(t, &runs)
	s, err := trust.New(e, trust.WithSingleSession(2), trust.WithReceipts(&receipt.Issuer{Store: &receipt.MemStore{}}))
	if err != nil {
		t.Fatal(err)
	}
	call := func(trace string, policy trust.Policy) string {
		t.Helper()
		req := request(trust.ModeValidation, policy)
		req.Receipt = receipt.Inline()
		resp, err := s.Call(router.WithTraceID(ctx, trace), req)
		if err != nil {
			t.Fatal(err)
		}
		r, err := receipt.Parse(resp.Receipt)
		if err != nil {
			t.Fatal(err)
		}
		return r.ReceiptID
	}
	report := func(id string) int64 {
		t.Helper()
		before := runs.Load()
		if err := s.FeedbackVerdict(ctx, id, router.VerdictInvalid); err != nil {
			t.Fatal(err)
		}
		return runs.Load() - before
	}
	if got := report(call("4bf92f3577b34da6a3ce929d0e0e4736", trust.PolicyFast)); got < 1 || got > 4 {
		t.Errorf("a report by receipt id ran %d runs, want the exam's 1 to 4", got)
	}
	const reused = "5cf92f3577b34da6a3ce929d0e0e4737"
	first := call(reused, trust.PolicyFast)
	call(reused, trust.PolicySafe) // the same trace id, three sessions
	if got := report(first); got != 0 {
		t.Errorf("a report on a receipt whose trace id was reused ran %d runs, want none", got)
	}
}

// TestService_examTelemetry checks that an exam's oracle call is marked
// vouch.trust.exam on its span and metrics, and the caller's call is not.
func TestService_examTelemetry(t *testing.T) {
	rec := telemetrytest.New(t)
	ctx := trust.WithCaller(context.Background(), "key:alice")
	var runs atomic.Int64
	_, _, e := examEngine(t, &runs)
	s, err := trust.New(e, trust.WithSingleSession(2), trust.WithTelemetry(rec.TracerProvider, rec.MeterProvider))
	if err != nil {
		t.Fatal(err)
	}
	resp, err := s.Call(ctx, request(trust.ModeValidation, trust.PolicyFast))
	if err != nil {
		t.Fatal(err)
	}
	if err := s.FeedbackVerdict(ctx, resp.TraceID, router.VerdictInvalid); err != nil {
		t.Fatal(err)
	}
	points := rec.AllPoints(t)
	want := map[string]int64{
		"vouch.trust.calls vouch.mode=validation,vouch.tier=fast":                         1,
		"vouch.trust.calls vouch.mode=validation,vouch.tier=oracle,vouch.trust.exam=true": 1,
		"vouch.trust.runs vouch.mode=validation,vouch.tier=fast":                          1,
		"vouch.trust.runs vouch.mode=validation,vouch.tier=oracle,vouch.trust.exam=true":  1,
	}
	got := map[string]int64{}
	status := regexp.MustCompile(`vouch\.status=[A-Z_]+,`) // whatever the calls answered
	for k, n := range points {
		if strings.HasPrefix(k, "vouch.trust.") {
			got[status.ReplaceAllString(k, "")] += n
		}
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("trust metrics (-want +got):\n%s", diff)
	}
	exams := map[bool]int{}
	for _, sp := range rec.Spans.GetSpans() {
		if sp.Name != "trust.call" {
			continue
		}
		exam := false
		for _, a := range sp.Attributes {
			exam = exam || a.Key == "vouch.trust.exam" && a.Value.AsBool()
		}
		exams[exam]++
	}
	if diff := cmp.Diff(map[bool]int{false: 1, true: 1}, exams); diff != "" {
		t.Errorf("trust.call spans by exam (-want +got):\n%s", diff)
	}
}

// TestService_examTeachesOnce: an oracle call runs the five sessions and
// session 1 dissents, rightly; its exam counts the same votes as cast,
// asking no session again. The report
// teaches each session the claim's outcome once, and scores session 1's
// one disagreement with the others once, though both calls hold them.
func TestService_examTeachesOnce(t *testing.T) {
	ctx := trust.WithCaller(context.Background(), "key:alice")
	var runs atomic.Int64
	store, book, e := examEngine(t, &runs)
	s, err := trust.New(e)
	if err != nil {
		t.Fatal(err)
	}
	req := request(trust.ModeValidation, trust.PolicyOracle)
	resp, err := s.Call(ctx, req)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.FeedbackVerdict(ctx, resp.TraceID, router.VerdictInvalid); err != nil {
		t.Fatal(err)
	}
	if got := runs.Load(); got != 5 {
		t.Fatalf("the call and its exam ran %d runs, want the call's 5: the exam counts its votes as cast", got)
	}
	w := book.Options().FeedbackWeight
	ids := []int64{1, 2, 3, 4, 5}
	keys := make([]reputation.Key, len(ids))
	want := make([]reputation.Record, len(ids))
	for i, id := range ids {
		keys[i] = reputation.Key{Session: id}
		want[i] = reputation.Record{Wrong: w}
	}
	want[0] = reputation.Record{Right: w}
	if diff := cmp.Diff(want, reputationtest.Load(t, store, keys...)); diff != "" {
		t.Errorf("records after one report (-want +got):\n%s", diff)
	}
	snap, err := book.Snapshot(ctx, router.Scope(router.KindValidate, req.Task.Type), reputation.SnapshotRequest{Leader: ids[:1]})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]reputation.Lead{{Session: 1, Won: 1}}, snap.Records); diff != "" {
		t.Errorf("session 1's record against the others (-want +got):\n%s", diff)
	}
}
