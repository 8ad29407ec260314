package reputation

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// TestLedger_reportByFormerVersion: a call a former version recorded a
// report on, under a name without the call's time, counts that report
// once: the same report again adds nothing, and the opposite one
// replaces it there.
func TestLedger_reportByFormerVersion(t *testing.T) {
	ctx := context.Background()
	store := new(Memory)
	b, err := New(store, Options{})
	if err != nil {
		t.Fatal(err)
	}
	call := Call{Scope: Scope{Operation: "validate_v3"}, Ballots: []Ballot{{Session: 1, Backed: true}}, At: time.Now()}
	l := NewLedger(1)
	l.PutCall("alice", "t", call)
	mark, former := reportKeys("alice", "t", call)
	// What a former version's report that the call was right added.
	if err := store.Add(ctx, b.opts.Horizon, append(b.reportDeltas(call, true, 1), Delta{Key: former, Delta: Record{Right: 1}})); err != nil {
		t.Fatal(err)
	}
	w := float64(DefaultFeedbackWeight)
	keys := []Key{{Session: 1}, mark, former}
	for i, r := range []struct {
		right bool
		want  []Record
	}{
		{true, []Record{{Right: w}, {}, {Right: 1}}},
		{false, []Record{{Wrong: w}, {}, {Wrong: 1}}},
	} {
		if ok, err := l.Report(ctx, b, "alice", "t", r.right); !ok || err != nil {
			t.Fatalf("report %d: %v, %v", i, ok, err)
		}
		got, err := store.Load(ctx, keys)
		if err != nil {
			t.Fatal(err)
		}
		if diff := cmp.Diff(r.want, got); diff != "" {
			t.Errorf("after report %d (%v): session 1, the mark and the former mark (-want +got):\n%s", i, r.right, diff)
		}
	}
}
