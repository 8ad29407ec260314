package router_test

import (
	"context"
	"encoding/json"
	"testing"
	"time"

	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
)

// reputationEngines returns the engines BenchmarkEngineReputation
// compares, on five instant workers, with the request of each: reputation
// off (majority), on with the default majority aggregation, and on with
// aggregation "weighted".
func reputationEngines(b *testing.B) (names []string, engines []*router.Engine, reqs []*router.ValidateV3Request) {
	w := routertest.Verdict(router.VerdictValid)
	for _, c := range []struct {
		name string
		opts []router.EngineOption
		agg  router.Aggregation
	}{
		{"off", []router.EngineOption{router.WithReputation(nil)}, ""},
		{"on", nil, ""},
		{"weighted", nil, router.AggregationWeighted},
	} {
		e, err := router.NewEngine(routertest.Sessions(1, 5, w, w, w, w, w), c.opts...)
		if err != nil {
			b.Fatal(err)
		}
		names, engines = append(names, c.name), append(engines, e)
		reqs = append(reqs, &router.ValidateV3Request{
			ValidateTask: router.ValidateTask{Claim: router.Claim{Type: "summary", Output: json.RawMessage(`"s"`)}},
			Consensus:    router.ConsensusRequest{Replicas: 5, Aggregation: c.agg},
		})
	}
	return names, engines, reqs
}

// BenchmarkEngineReputation measures what reputation costs a version 3
// validate of five replicas on instant workers (BenchmarkValidateV3_
// fiveInstant's call): each iteration makes the call once on each engine
// (reputation off, on with majority, on with weighted), rotating which
// goes first so that a drifting machine favours none, and reports
// off-ns/call, on-ns/call, weighted-ns/call and the ratios on/off and
// weighted/off.
func BenchmarkEngineReputation(b *testing.B) {
	names, engines, reqs := reputationEngines(b)
	ctx := context.Background()
	spent := make([]time.Duration, len(engines))
	i := 0
	for b.Loop() {
		for k := range engines {
			j := (i + k) % len(engines)
			start := time.Now()
			if _, err := engines[j].ValidateV3(ctx, reqs[j]); err != nil {
				b.Fatal(err)
			}
			spent[j] += time.Since(start)
		}
		i++
	}
	n := float64(b.N)
	for j, name := range names {
		b.ReportMetric(float64(spent[j].Nanoseconds())/n, name+"-ns/call")
	}
	b.ReportMetric(float64(spent[1])/float64(spent[0]), "on/off")
	b.ReportMetric(float64(spent[2])/float64(spent[0]), "weighted/off")
	b.ReportMetric(0, "ns/op") // three calls per op: the per-call figures above are the ones to read
}

// BenchmarkReputation times and reports the memory of each engine's
// call apart (-benchmem).
func BenchmarkReputation(b *testing.B) {
	names, engines, reqs := reputationEngines(b)
	ctx := context.Background()
	for j, name := range names {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := engines[j].ValidateV3(ctx, reqs[j]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
