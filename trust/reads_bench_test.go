package trust_test

import (
	"context"
	"testing"

	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/reputation/reputationtest"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// BenchmarkAdaptive_storeReads measures an adaptive call on five
// in-process sessions (its pool) whose engine keeps reputation in a
// counting store, and reports the store reads each call makes
// (reads/op): a validation on five honest sessions, which reads its
// calibration maps and its leader (none); the same when session 1, the
// only one to answer INVALID (the truth), leads after twenty safe calls
// whose outcomes were reported, and decides alone; and a delegation of an open answer, which reads its
// map and the coincidence of wrong answers.
func BenchmarkAdaptive_storeReads(b *testing.B) {
	dissent := router.WorkerFunc(func(context.Context, *router.Job) (*router.Result, error) {
		return &router.Result{Verdict: router.VerdictInvalid, Confidence: 0.9}, nil
	})
	for _, bc := range []struct {
		name  string
		mode  trust.Mode
		first router.Worker
		led   bool
	}{
		{"validation", trust.ModeValidation, honest(0.9), false},
		{"validation/led", trust.ModeValidation, dissent, true},
		{"delegation", trust.ModeDelegation, honest(0.9), false},
	} {
		b.Run(bc.name, func(b *testing.B) {
			s, store := counted(b, bc.first, trust.WithSessionPool(1, 2, 3, 4, 5))
			ctx := context.Background()
			if bc.led {
				for range 20 { // the truth is INVALID: session 1 alone is right
					resp, err := s.Call(ctx, request(bc.mode, trust.PolicySafe))
					if err != nil {
						b.Fatal(err)
					}
					if resp.Status == trust.StatusRetry {
						continue
					}
					if err := s.Feedback(ctx, resp.TraceID, resp.Status == trust.StatusInvalid); err != nil {
						b.Fatal(err)
					}
				}
				if resp, err := s.Call(ctx, request(bc.mode, trust.PolicyAdaptive)); err != nil || resp.Evidence.Leader == nil {
					b.Fatalf("no leader after the reports: %v", err)
				}
			}
			benchReads(b, s, store, request(bc.mode, trust.PolicyAdaptive))
		})
	}
}

// BenchmarkOneCall_storeReads measures a call of one router call (fast,
// safe, oracle) on five in-process sessions whose engine keeps
// reputation in a counting store, and reports the store reads each call
// makes (reads/op): a validation and a delegation of an open answer at
// safe, and a validation at fast and at oracle.
func BenchmarkOneCall_storeReads(b *testing.B) {
	for _, bc := range []struct {
		policy trust.Policy
		mode   trust.Mode
	}{
		{trust.PolicySafe, trust.ModeValidation},
		{trust.PolicySafe, trust.ModeDelegation},
		{trust.PolicyFast, trust.ModeValidation},
		{trust.PolicyOracle, trust.ModeValidation},
	} {
		b.Run(string(bc.policy)+"/"+string(bc.mode), func(b *testing.B) {
			s, store := counted(b, honest(0.9), trust.WithSessionPool(1, 2, 3, 4, 5))
			benchReads(b, s, store, request(bc.mode, bc.policy))
		})
	}
}

// TestService_readsOnce checks that a call of every tier reads its
// scope's reputation once: adaptive's router calls take what it read
// (router.WithReading) and leave the calibration to it
// (router.WithoutCalibration); the one router call of fast, safe and
// oracle takes the reliabilities of every session it may run and the
// router's own calibration map with it. Over an engine with no session
// pool, the sessions read are those the engine reports.
func TestService_readsOnce(t *testing.T) {
	for _, pool := range [][]router.SessionID{{1, 2, 3, 4, 5}, nil} {
		for _, p := range []trust.Policy{trust.PolicyFast, trust.PolicySafe, trust.PolicyOracle, trust.PolicyAdaptive} {
			for _, mode := range []trust.Mode{trust.ModeValidation, trust.ModeDelegation} {
				var opts []trust.Option
				if pool != nil {
					opts = append(opts, trust.WithSessionPool(pool...))
				}
				s, store := counted(t, honest(0.9), opts...)
				resp, err := s.Call(context.Background(), request(mode, p))
				if err != nil {
					t.Fatal(err)
				}
				if got := store.Loads(); got != 1 || p == trust.PolicyAdaptive && len(resp.Evidence.Steps) < 2 {
					t.Errorf("%s %s, pool %v: %d store reads over %d steps, want one read (over at least two steps at adaptive)", p, mode, pool, got, len(resp.Evidence.Steps))
				}
			}
		}
	}
}

// counted returns a service with opts over an engine of five in-process
// sessions, first answering for session 1 and honest(0.9) for the
// others, that keeps reputation in the counting store it returns.
func counted(tb testing.TB, first router.Worker, opts ...trust.Option) (*trust.Service, *reputationtest.CountingStore) {
	tb.Helper()
	store := &reputationtest.CountingStore{}
	book, err := reputation.New(store, reputation.Options{})
	if err != nil {
		tb.Fatal(err)
	}
	e, err := router.NewEngine(routertest.Sessions(1, 2, first, honest(0.9), honest(0.9), honest(0.9), honest(0.9)), router.WithReputation(book))
	if err != nil {
		tb.Fatal(err)
	}
	s, err := trust.New(e, opts...)
	if err != nil {
		tb.Fatal(err)
	}
	return s, store
}

// benchReads runs req on s for b's loop and reports the store reads of
// each call (reads/op).
func benchReads(b *testing.B, s *trust.Service, store *reputationtest.CountingStore, req *trust.Request) {
	b.ReportAllocs()
	before := store.Loads()
	for b.Loop() {
		if _, err := s.Call(context.Background(), req); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(store.Loads()-before)/float64(b.N), "reads/op")
}

// TestService_delegationScope checks that every router call of a
// delegation learns in the call's scope, its task type's kind
// (router.WithScope), where the service takes reports on it: an oracle
// delegation whose two losing answers differ teaches the coincidence of
// wrong answers in the kind's scope, and none at the operation's own.
func TestService_delegationScope(t *testing.T) {
	ctx := context.Background()
	book, err := reputation.New(nil, reputation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	answer := func(s string) router.Worker { return routertest.Fixed(router.Result{Output: s}) }
	e, err := router.NewEngine(routertest.Sessions(1, 5, answer("42"), answer("42"), answer("42"), answer("41"), answer("40")), router.WithReputation(book))
	if err != nil {
		t.Fatal(err)
	}
	s, err := trust.New(e)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Call(ctx, request(trust.ModeDelegation, trust.PolicyOracle)); err != nil {
		t.Fatal(err)
	}
	prior := reputation.DefaultCoincidencePrior().Mean()
	for _, tc := range []struct {
		scope   reputation.Scope
		learned bool
	}{
		{router.Scope(router.KindDelegate, "summary"), true},
		{router.Scope(router.KindDelegate, ""), false},
	} {
		c, err := book.Coincidence(ctx, tc.scope)
		if err != nil {
			t.Fatal(err)
		}
		if (c != prior) != tc.learned {
			t.Errorf("scope %+v: coincidence %v (prior %v), want learned %v", tc.scope, c, prior, tc.learned)
		}
	}
}
