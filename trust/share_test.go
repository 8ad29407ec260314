package trust_test

import (
	"context"
	"math"
	"testing"

	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// adaptiveFlood runs 200 adaptive calls through a service over an engine
// built with opts, nine in ten by a flooding caller on summaries, the
// others (the first among them) by an honest caller on classifications
// (so that each caller's evidence lands in a scope of its own), then has
// each report its calls wrong. It returns the flooder's share of the evidence the calls taught
// and of the evidence the reports taught.
func adaptiveFlood(t *testing.T, opts ...router.EngineOption) (calls, reports float64) {
	t.Helper()
	store := new(reputation.Memory)
	book, err := reputation.New(store, reputation.Options{Horizon: 1e6})
	if err != nil {
		t.Fatal(err)
	}
	w := honest(0.9)
	e, err := router.NewEngine(routertest.Sessions(1, 2, w, w, w, w, w), append(opts, router.WithReputation(book))...)
	if err != nil {
		t.Fatal(err)
	}
	s, err := trust.New(e)
	if err != nil {
		t.Fatal(err)
	}
	caller := func(i int) (context.Context, string) {
		if i%10 == 0 {
			return trust.WithCaller(context.Background(), "key:honest"), "classification"
		}
		return trust.WithCaller(context.Background(), "key:flood"), "summary"
	}
	evidence := func(kind string) float64 {
		var keys []reputation.Key
		for id := range int64(5) {
			keys = append(keys, reputation.Key{Session: id + 1, Operation: string(router.KindValidate), Kind: kind})
		}
		recs, err := store.Load(context.Background(), keys)
		if err != nil {
			t.Fatal(err)
		}
		var n float64
		for _, r := range recs {
			n += r.Right + r.Wrong
		}
		return n
	}
	traces := make([]string, 200)
	for i := range traces {
		ctx, kind := caller(i)
		req := request(trust.ModeValidation, trust.PolicyAdaptive)
		req.Task.Type = kind
		resp, err := s.Call(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		traces[i] = resp.TraceID
	}
	flood, honest := evidence("summary"), evidence("classification")
	for i, id := range traces {
		ctx, _ := caller(i)
		if err := s.Feedback(ctx, id, false); err != nil {
			t.Fatalf("report on call %d: %v", i, err)
		}
	}
	rflood, rhonest := evidence("summary")-flood, evidence("classification")-honest
	return flood / (flood + honest), rflood / (rflood + rhonest)
}

// TestService_callerShare: the router's bound on one caller's share of
// what the book learns (router.WithCallerShare) holds for the votes a
// service teaches itself (adaptive's pooled votes) and for the reports
// it takes.
func TestService_callerShare(t *testing.T) {
	calls, reports := adaptiveFlood(t)
	const tol = 0.06
	if math.Abs(calls-router.DefaultCallerShare) > tol {
		t.Errorf("flooder's share of the evidence its calls taught = %.3f, want %v ± %v", calls, router.DefaultCallerShare, tol)
	}
	if math.Abs(reports-router.DefaultCallerShare) > tol {
		t.Errorf("flooder's share of the evidence its reports taught = %.3f, want %v ± %v", reports, router.DefaultCallerShare, tol)
	}
	calls, reports = adaptiveFlood(t, router.WithCallerShare(1))
	if calls < 0.85 || reports < 0.85 {
		t.Errorf("with the bound off, flooder's shares = %.3f (calls), %.3f (reports), want about 0.9", calls, reports)
	}
}
