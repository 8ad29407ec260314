package consensus_test

import (
	"context"
	"testing"
	"time"

	"github.com/vouchkit/vouch/consensus"
	"golang.org/x/sync/errgroup"
)

// BenchmarkFanOut compares Runner.Run on 5 replicas that vote at once with
// the bare baseline: an errgroup starting 5 goroutines that write their vote
// into a slice, then Wait.
func BenchmarkFanOut(b *testing.B) {
	vote := func(ctx context.Context, i int) consensus.Vote { return consensus.Vote{Label: consensus.LabelValid} }
	b.Run("errgroup", func(b *testing.B) {
		b.ReportAllocs()
		ctx := context.Background()
		for b.Loop() {
			votes := make([]consensus.Vote, 5)
			var g errgroup.Group
			for i := range votes {
				g.Go(func() error { votes[i] = vote(ctx, i); return nil })
			}
			if err := g.Wait(); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("runner", func(b *testing.B) {
		b.ReportAllocs()
		var r consensus.Runner
		ctx := context.Background()
		for b.Loop() {
			if _, err := r.Run(ctx, 5, vote); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// BenchmarkEarlyQuorum runs 5 replicas, 3 answering after 10ms and 2 after
// 1s, against the baseline of waiting 10ms. Run should return close to the
// baseline: the 3 decide the outcome and the 2 are cancelled.
func BenchmarkEarlyQuorum(b *testing.B) {
	sleep := func(ctx context.Context, d time.Duration) bool {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
			return true
		case <-ctx.Done():
			return false
		}
	}
	b.Run("wait10ms", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			sleep(context.Background(), 10*time.Millisecond)
		}
	})
	b.Run("runner", func(b *testing.B) {
		b.ReportAllocs()
		r := consensus.Runner{Timeout: 5 * time.Second}
		for b.Loop() {
			out, err := r.Run(context.Background(), 5, func(ctx context.Context, i int) consensus.Vote {
				d := 10 * time.Millisecond
				if i >= 3 {
					d = time.Second
				}
				if !sleep(ctx, d) {
					return consensus.Vote{Label: consensus.LabelTimeout}
				}
				return consensus.Vote{Label: consensus.LabelValid}
			})
			if err != nil || out.Agreeing != 3 {
				b.Fatalf("Run = %d agreeing, %v; want 3, nil", out.Agreeing, err)
			}
		}
	})
}
