package router_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/reputation/reputationtest"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

// BenchmarkEngine_storeReads counts the store reads of an engine's own
// version 3 calls, which no trust service hands a Reading: a weighted
// validation (the sessions' records and the weighted calibration map), a
// majority validation, and a weighted delegation that teaches (the
// coincidence of wrong answers too), on three instant sessions over a
// counting in-memory store. It reports reads/call beside the time and
// memory of each call.
func BenchmarkEngine_storeReads(b *testing.B) {
	ok := routertest.Fixed(router.Result{Verdict: router.VerdictValid, Output: "42"})
	validate := func(agg router.Aggregation) func(context.Context, *router.Engine) error {
		req := &router.ValidateV3Request{
			ValidateTask: router.ValidateTask{Claim: router.Claim{Type: "summary", Output: json.RawMessage(`"s"`)}},
			Consensus:    router.ConsensusRequest{Replicas: 3, Aggregation: agg},
		}
		return func(ctx context.Context, e *router.Engine) error { _, err := e.ValidateV3(ctx, req); return err }
	}
	delegate := &router.DelegateV3Request{
		DelegateTask: router.DelegateTask{Objective: "answer"},
		Consensus:    router.ConsensusRequest{Replicas: 3, Aggregation: router.AggregationWeighted},
	}
	for _, c := range []struct {
		name string
		call func(context.Context, *router.Engine) error
	}{
		{"weighted validation", validate(router.AggregationWeighted)},
		{"majority validation", validate("")},
		{"weighted delegation", func(ctx context.Context, e *router.Engine) error { _, err := e.DelegateV3(ctx, delegate); return err }},
	} {
		b.Run(c.name, func(b *testing.B) {
			store := &reputationtest.CountingStore{}
			book, err := reputation.New(store, reputation.Options{})
			if err != nil {
				b.Fatal(err)
			}
			e, err := router.NewEngine(routertest.Sessions(1, 3, ok, ok, ok), router.WithReputation(book))
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.ReportAllocs()
			before := store.Loads()
			for b.Loop() {
				if err := c.call(ctx, e); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(store.Loads()-before)/float64(b.N), "reads/call")
		})
	}
}
