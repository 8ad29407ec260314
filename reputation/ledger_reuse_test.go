package reputation_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/reputation/reputationtest"
)

// TestLedger_reportOnReusedID: a caller that reuses an id for a later
// call, which replaces the first in the Ledger, reports on the later call
// afresh, though the same sessions voted alike in both in the same week:
// its report teaches the later call's outcome beside the first's, and the
// opposite report on it replaces its own report, never the first call's.
func TestLedger_reportOnReusedID(t *testing.T) {
	ctx := context.Background()
	store := new(reputation.Memory)
	b, err := reputation.New(store, reputation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	ballots := []reputation.Ballot{{Session: 1, Backed: true}, {Session: 2, Backed: true}}
	at := time.Now().Truncate(time.Millisecond)
	l := reputation.NewLedger(8)
	w := float64(reputation.DefaultFeedbackWeight)
	session := reputation.Key{Session: 1}

	l.PutCall("alice", "t", reputation.Call{Scope: scope, Ballots: ballots, At: at})
	if ok, err := l.Report(ctx, b, "alice", "t", true); !ok || err != nil {
		t.Fatalf("report on the first call: %v, %v", ok, err)
	}
	l.PutCall("alice", "t", reputation.Call{Scope: scope, Ballots: ballots, At: at.Add(time.Minute)})
	for i, r := range []struct {
		right bool
		want  reputation.Record
	}{
		{true, reputation.Record{Right: 2 * w}},
		{true, reputation.Record{Right: 2 * w}},
		{false, reputation.Record{Right: w, Wrong: w}},
	} {
		if ok, err := l.Report(ctx, b, "alice", "t", r.right); !ok || err != nil {
			t.Fatalf("report %d on the later call: %v, %v", i, ok, err)
		}
		if diff := cmp.Diff([]reputation.Record{r.want}, reputationtest.Load(t, store, session)); diff != "" {
			t.Errorf("after report %d (%v) on the later call (-want +got):\n%s", i, r.right, diff)
		}
	}
}
