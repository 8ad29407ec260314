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
			store := &reputationtest.CountingStore{}
			book, err := reputation.New(store, reputation.Options{})
			if err != nil {
				b.Fatal(err)
			}
			e, err := router.NewEngine(routertest.Sessions(1, 2, bc.first, honest(0.9), honest(0.9), honest(0.9), honest(0.9)), router.WithReputation(book))
			if err != nil {
				b.Fatal(err)
			}
			s, err := trust.New(e, trust.WithSessionPool(1, 2, 3, 4, 5))
			if err != nil {
				b.Fatal(err)
			}
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
			b.ReportAllocs()
			before := store.Loads()
			for b.Loop() {
				if _, err := s.Call(ctx, request(bc.mode, trust.PolicyAdaptive)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(store.Loads()-before)/float64(b.N), "reads/op")
		})
	}
}

// TestAdaptive_readsOnce checks that an adaptive call reads its scope's
// reputation once: the router calls of its runs take what it read
// (router.WithReading) and leave the calibration to it
// (router.WithoutCalibration).
func TestAdaptive_readsOnce(t *testing.T) {
	for _, mode := range []trust.Mode{trust.ModeValidation, trust.ModeDelegation} {
		store := &reputationtest.CountingStore{}
		book, err := reputation.New(store, reputation.Options{})
		if err != nil {
			t.Fatal(err)
		}
		e, err := router.NewEngine(routertest.Sessions(1, 2, honest(0.9), honest(0.9), honest(0.9), honest(0.9), honest(0.9)), router.WithReputation(book))
		if err != nil {
			t.Fatal(err)
		}
		s, err := trust.New(e, trust.WithSessionPool(1, 2, 3, 4, 5))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := s.Call(context.Background(), request(mode, trust.PolicyAdaptive))
		if err != nil {
			t.Fatal(err)
		}
		if got := store.Loads(); got != 1 || len(resp.Evidence.Steps) < 2 {
			t.Errorf("%s: %d store reads over %d steps, want one read over at least two", mode, got, len(resp.Evidence.Steps))
		}
	}
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
	prior := reputation.DefaultCoincidencePrior.Mean()
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
