package consensus_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"go.uber.org/goleak"

	"github.com/vouchkit/vouch/consensus"
)

// TestRunner_Run_abandon checks that under Abandon a replica ignoring its
// cancelled context is recorded as cut short without its vote, that Run
// returns while it still runs, and that its goroutine ends once it
// returns.
func TestRunner_Run_abandon(t *testing.T) {
	defer goleak.VerifyNone(t)
	release := make(chan struct{})
	var returned atomic.Bool
	r := consensus.Runner{Abandon: true, Grace: time.Millisecond}
	out, err := r.Run(context.Background(), 3, func(ctx context.Context, i int) consensus.Vote {
		if i == 1 {
			<-release // ignores ctx
			returned.Store(true)
			return consensus.Vote{Session: 101, Label: consensus.LabelInvalid}
		}
		return consensus.Vote{Session: int64(100 + i), Label: valid}
	})
	if err != nil {
		t.Fatal(err)
	}
	if returned.Load() {
		t.Fatal("Run waited for the stubborn replica, want it abandoned")
	}
	want := []consensus.Vote{
		{Session: 100, Label: valid},
		{Label: cancelled, Reason: consensus.ErrDecided.Error()},
		{Session: 102, Label: valid},
	}
	if diff := cmp.Diff(want, out.Votes); diff != "" {
		t.Errorf("votes (-want +got):\n%s", diff)
	}
	close(release)
}

// TestRunner_Run_abandonKeepsPromptReplicas checks that Abandon changes
// nothing for replicas that return once cancelled: their votes are cut
// short as without it, with their Session and Latency.
func TestRunner_Run_abandonKeepsPromptReplicas(t *testing.T) {
	defer goleak.VerifyNone(t)
	s := newStraggler(2)
	r := consensus.Runner{Abandon: true, Grace: time.Hour}
	out, err := r.Run(context.Background(), 5, replicas(s, map[int]consensus.Label{0: valid, 2: valid, 4: valid}))
	if err != nil {
		t.Fatal(err)
	}
	reason := consensus.ErrDecided.Error()
	for _, i := range []int{1, 3} {
		want := consensus.Vote{Session: int64(100 + i), Label: cancelled, Latency: time.Second, Reason: reason}
		if diff := cmp.Diff(want, out.Votes[i]); diff != "" {
			t.Errorf("vote %d (-want +got):\n%s", i, diff)
		}
	}
}
