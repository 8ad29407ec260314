package router_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

// BenchmarkValidateV3_fiveInstant compares a version 3 validate on five
// instant workers with the bare errgroup fan-out of the same five calls.
func BenchmarkValidateV3_fiveInstant(b *testing.B) {
	w := routertest.Verdict(router.VerdictValid)
	ctx := context.Background()
	b.Run("engine", func(b *testing.B) {
		e, err := router.NewEngine(routertest.Sessions(1, 5, w, w, w, w, w))
		if err != nil {
			b.Fatal(err)
		}
		req := &router.ValidateV3Request{
			ValidateTask: router.ValidateTask{Claim: router.Claim{Type: "summary", Output: json.RawMessage(`"s"`)}},
			Consensus:    router.ConsensusRequest{Replicas: 5},
		}
		b.ReportAllocs()
		for b.Loop() {
			if _, err := e.ValidateV3(ctx, req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("errgroup", func(b *testing.B) {
		job := &router.Job{Kind: router.KindValidate}
		b.ReportAllocs()
		for b.Loop() {
			var results [5]*router.Result
			g, gctx := errgroup.WithContext(ctx)
			for i := range results {
				g.Go(func() (err error) {
					results[i], err = w.Work(gctx, job)
					return err
				})
			}
			if err := g.Wait(); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkEarlyQuorum compares a version 3 validate whose three fast
// workers answer after 10ms, while two stragglers would take a second,
// with a bare 10ms wait.
func BenchmarkEarlyQuorum(b *testing.B) {
	const fast, slow = 10 * time.Millisecond, time.Second
	ctx := context.Background()
	b.Run("engine", func(b *testing.B) {
		v := routertest.Verdict(router.VerdictValid)
		f, s := routertest.Slow(v, fast), routertest.Slow(v, slow)
		e, err := router.NewEngine(routertest.Sessions(1, 5, f, s, f, s, f))
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		for b.Loop() {
			req := &router.ValidateV3Request{
				ValidateTask: router.ValidateTask{Claim: router.Claim{Type: "summary", Output: json.RawMessage(`"s"`)}},
				Consensus:    router.ConsensusRequest{Replicas: 5, SessionPool: []router.SessionID{1, 2, 3, 4, 5}},
			}
			// Without rotation the fast workers keep replicas 0, 2 and 4.
			req.SessionID = 1
			if _, err := e.ValidateV3(ctx, req); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("wait", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			t := time.NewTimer(fast)
			select {
			case <-t.C:
			case <-ctx.Done():
			}
		}
	})
}
