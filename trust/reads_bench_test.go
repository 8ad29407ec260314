package trust_test

import (
	"context"
	"sync/atomic"
	"testing"

	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/router"
	"github.com/vouchkit/vouch/router/routertest"
	"github.com/vouchkit/vouch/trust"
)

// loadCounter is a reputation Memory that counts its reads.
type loadCounter struct {
	reputation.Memory
	loads atomic.Int64
}

func (s *loadCounter) Load(ctx context.Context, keys []reputation.Key) ([]reputation.Record, error) {
	s.loads.Add(1)
	return s.Memory.Load(ctx, keys)
}

// BenchmarkAdaptive_storeReads measures an adaptive call on five honest
// in-process sessions (its pool) whose engine keeps reputation in a counting store,
// and reports the store reads each call makes (reads/op): a validation,
// which reads its calibration maps and its leader, and a delegation of an
// open answer, which reads its map and the coincidence of wrong answers.
func BenchmarkAdaptive_storeReads(b *testing.B) {
	for _, mode := range []trust.Mode{trust.ModeValidation, trust.ModeDelegation} {
		b.Run(string(mode), func(b *testing.B) {
			store := &loadCounter{}
			book, err := reputation.New(store, reputation.Options{})
			if err != nil {
				b.Fatal(err)
			}
			e, err := router.NewEngine(routertest.Sessions(1, 2, honest(0.9), honest(0.9), honest(0.9), honest(0.9), honest(0.9)), router.WithReputation(book))
			if err != nil {
				b.Fatal(err)
			}
			s, err := trust.New(e, trust.WithSessionPool(1, 2, 3, 4, 5))
			if err != nil {
				b.Fatal(err)
			}
			ctx := context.Background()
			b.ReportAllocs()
			before := store.loads.Load()
			for b.Loop() {
				if _, err := s.Call(ctx, request(mode, trust.PolicyAdaptive)); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(store.loads.Load()-before)/float64(b.N), "reads/op")
		})
	}
}
