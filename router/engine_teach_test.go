package router_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

// teachEngine returns an engine of six always-valid sessions learning in
// a book over store whose records forget nothing a test makes.
func teachEngine(t *testing.T, store reputation.Store, opts ...router.EngineOption) *router.Engine {
	t.Helper()
	book := agreementBook(t, store, reputation.Options{Horizon: 1e6})
	var sessions []router.Session
	for id := range 6 {
		sessions = append(sessions, router.Session{ID: router.SessionID(id + 1), Worker: routertest.Verdict(router.VerdictValid)})
	}
	return newEngine(t, sessions, append(opts, router.WithReputation(book))...)
}

// teachCall makes call i of caller on sessions pool, under trace id i.
func teachCall(t *testing.T, e *router.Engine, caller string, i int, pool ...router.SessionID) {
	t.Helper()
	ctx := router.WithCaller(router.WithTraceID(context.Background(), traceOf(i)), caller)
	req := validateV3(len(pool), router.DisagreeReturnAll)
	req.Claim.Output = json.RawMessage(fmt.Sprintf(`"claim %d"`, i))
	req.Consensus.SessionPool = pool
	if _, err := e.ValidateV3(ctx, req); err != nil {
		t.Fatal(err)
	}
}

func traceOf(i int) string { return fmt.Sprintf("%032x", i+1) }

// evidence returns the evidence of session id's record in store.
func evidence(t *testing.T, store reputation.Store, id int64) float64 {
	t.Helper()
	recs, err := store.Load(context.Background(), []reputation.Key{{Session: id}})
	if err != nil {
		t.Fatal(err)
	}
	return recs[0].Right + recs[0].Wrong
}

// flooded runs 1,000 calls, nine in ten by a flooding caller on sessions
// 1 to 3 (which only it talks about), the others by an honest caller on
// sessions 4 to 6 (the first call among them), then has each report every call it made wrong, in the
// same order. It returns the flooder's share of the evidence its calls
// taught (sessions 1 and 4 stand for each caller), and of the evidence
// its reports taught. The flooder makes call i as flooder(i).
func flooded(t *testing.T, flooder func(i int) string, opts ...router.EngineOption) (calls, reports float64) {
	t.Helper()
	store := new(reputation.Memory)
	e := teachEngine(t, store, opts...)
	caller := func(i int) string {
		if i%10 == 0 {
			return "key:honest"
		}
		return flooder(i)
	}
	for i := range 1000 {
		if caller(i) == "key:honest" {
			teachCall(t, e, caller(i), i, 4, 5, 6)
		} else {
			teachCall(t, e, caller(i), i, 1, 2, 3)
		}
	}
	flood, honest := evidence(t, store, 1), evidence(t, store, 4)
	for i := range 1000 {
		ctx := router.WithCaller(context.Background(), caller(i))
		if err := e.Feedback(ctx, traceOf(i), false); err != nil {
			t.Fatalf("report on call %d: %v", i, err)
		}
	}
	rflood, rhonest := evidence(t, store, 1)-flood, evidence(t, store, 4)-honest
	return flood / (flood + honest), rflood / (rflood + rhonest)
}

// TestEngine_callerShare: a caller making nine calls in ten, on sessions
// of its choosing, supplies no more than the bound (one half) of what
// the book learns while another caller teaches too, by its calls and by
// its reports alike; so does an anonymous caller that makes each call
// from a new IPv6 address of its /64. Without the bound it supplies nine
// tenths.
func TestEngine_callerShare(t *testing.T) {
	for name, flooder := range map[string]func(int) string{
		"one name":           func(int) string { return "key:flood" },
		"addresses of a /64": func(i int) string { return fmt.Sprintf("ip:2001:db8::%x", i+1) },
	} {
		calls, reports := flooded(t, flooder)
		const tol = 0.03
		if math.Abs(calls-router.DefaultCallerShare) > tol {
			t.Errorf("%s: flooder's share of the evidence its calls taught = %.3f, want %v ± %v", name, calls, router.DefaultCallerShare, tol)
		}
		if math.Abs(reports-router.DefaultCallerShare) > tol {
			t.Errorf("%s: flooder's share of the evidence its reports taught = %.3f, want %v ± %v", name, reports, router.DefaultCallerShare, tol)
		}
	}
	calls, reports := flooded(t, func(int) string { return "key:flood" }, router.WithCallerShare(1))
	if calls != 0.9 || reports != 0.9 {
		t.Errorf("with the bound off, flooder's shares = %.3f (calls), %.3f (reports), want 0.9 each", calls, reports)
	}
}

// TestEngine_callerShareAlone: a caller alone teaches exactly as it
// would with no bound, every call and every report.
func TestEngine_callerShareAlone(t *testing.T) {
	keys := []reputation.Key{{Session: 1}, {Session: 2}, {Session: 3}, {Session: 4}, {Session: 5}, {Session: 6}, {Session: reputation.PanelSession, Operation: string(router.KindValidate)}}
	records := func(opts ...router.EngineOption) []reputation.Record {
		store := new(reputation.Memory)
		e := teachEngine(t, store, opts...)
		for i := range 600 {
			teachCall(t, e, "key:alone", i, router.SessionID(1+i%6), router.SessionID(1+(i+1)%6), router.SessionID(1+(i+2)%6))
		}
		for i := range 600 {
			if err := e.Feedback(router.WithCaller(context.Background(), "key:alone"), traceOf(i), i%3 != 0); err != nil {
				t.Fatal(err)
			}
		}
		recs, err := store.Load(context.Background(), keys)
		if err != nil {
			t.Fatal(err)
		}
		return recs
	}
	want := records(router.WithCallerShare(1))
	if want[0].Right+want[0].Wrong < 300 {
		t.Fatalf("session 1 learned %+v of its 300 calls", want[0])
	}
	if diff := cmp.Diff(want, records()); diff != "" {
		t.Errorf("a lone caller under the bound learns (-without +with):\n%s", diff)
	}
}

// TestWithCallerShare_invalid: a bound outside (0, 1] is refused.
func TestWithCallerShare_invalid(t *testing.T) {
	for _, bound := range []float64{0, -0.5, 1.01, math.NaN(), math.Inf(1)} {
		_, err := router.NewEngine([]router.Session{{ID: 1, Worker: routertest.Verdict(router.VerdictValid)}}, router.WithCallerShare(bound))
		if !errors.Is(err, router.ErrInvalidOption) {
			t.Errorf("WithCallerShare(%v): %v, want ErrInvalidOption", bound, err)
		}
	}
}
