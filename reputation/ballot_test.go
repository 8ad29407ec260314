package reputation_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/reputation/reputationtest"
)

// TestCall_Again: a call that asks a reported claim again marks the
// ballots of the sessions the first call ran, so that the claim's one
// outcome, reported on both, teaches each session once: session 1, which
// dissented from sessions 2 and 3 in both calls, learns one outcome and
// one won disagreement; session 4, which only the second call ran,
// learns its own.
func TestCall_Again(t *testing.T) {
	first := reputation.Call{Scope: leadScope, Ballots: []reputation.Ballot{
		{Session: 1, Opposed: true}, {Session: 2, Backed: true}, {Session: 3, Backed: true}, {Session: 6, Check: true, Backed: true},
	}}
	again := reputation.Call{Scope: leadScope, Ballots: []reputation.Ballot{
		{Session: 1, Opposed: true}, {Session: 2, Backed: true}, {Session: 3, Backed: true}, {Session: 4, Opposed: true}, {Session: 5, Backed: true}, {Session: 6, Backed: true},
	}}
	marked := again.Again(first)
	want := []reputation.Ballot{
		{Session: 1, Opposed: true, Taught: true, Scored: true},
		{Session: 2, Backed: true, Taught: true},
		{Session: 3, Backed: true, Taught: true},
		{Session: 4, Opposed: true},
		{Session: 5, Backed: true},
		{Session: 6, Backed: true, Taught: true}, // a check is scored against no one
	}
	if diff := cmp.Diff(want, marked.Ballots); diff != "" {
		t.Errorf("Again's ballots (-want +got):\n%s", diff)
	}
	if again.Ballots[0].Taught {
		t.Error("Again marked the ballots of the call it was given")
	}

	ctx := context.Background()
	store := new(reputation.Memory)
	b, err := reputation.New(store, reputation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	l := reputation.NewLedger(8)
	l.PutCall("alice", "first", first)
	l.PutCall("alice", "again", marked)
	for _, id := range []string{"first", "again"} {
		if ok, err := l.Report(ctx, b, "alice", id, false); !ok || err != nil {
			t.Fatalf("report on %s: %v, %v", id, ok, err)
		}
	}
	w := b.Options().FeedbackWeight
	got := reputationtest.Load(t, store, reputation.Key{Session: 1}, reputation.Key{Session: 2}, reputation.Key{Session: 4}, reputation.Key{Session: 5}, reputation.Key{Session: 6})
	wantRecs := []reputation.Record{{Right: w}, {Wrong: w}, {Right: w}, {Wrong: w}, {Wrong: w}}
	if diff := cmp.Diff(wantRecs, got); diff != "" {
		t.Errorf("sessions 1, 2, 4, 5 and 6 after both reports (-want +got):\n%s", diff)
	}
	snap, err := b.Snapshot(ctx, leadScope, reputation.SnapshotRequest{Leader: []int64{1, 4}})
	if err != nil {
		t.Fatal(err)
	}
	wantLeads := []reputation.Lead{{Session: 1, Won: 1}, {Session: 4, Won: 1}}
	if diff := cmp.Diff(wantLeads, snap.Records); diff != "" {
		t.Errorf("records against the others after both reports (-want +got):\n%s", diff)
	}
}
