package reputation_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/reputation"
)

// countingStore is a Memory that counts its reads and can fail them.
type countingStore struct {
	reputation.Memory
	loads atomic.Int64
	fail  error
}

func (s *countingStore) Load(ctx context.Context, keys []reputation.Key) ([]reputation.Record, error) {
	s.loads.Add(1)
	if s.fail != nil {
		return nil, s.fail
	}
	return s.Memory.Load(ctx, keys)
}

// TestBook_Snapshot checks that a Snapshot holds, from one store read,
// what Evidence, Leader, Calibrations and Coincidence each return.
func TestBook_Snapshot(t *testing.T) {
	ctx := context.Background()
	store := &countingStore{}
	b := newBook(t, store)
	sessions := []int64{1, 2, 3}
	// Session 3 dissents rightly four times: it leads.
	dissent := []reputation.Ballot{{Session: 1, Backed: true}, {Session: 2, Backed: true}, {Session: 3, Opposed: true}}
	for range 4 {
		if err := b.Feedback(ctx, leadScope, dissent, false); err != nil {
			t.Fatal(err)
		}
	}
	// Outcomes in the "safe/VALID" map, on calls of other sessions.
	agree := []reputation.Ballot{{Session: 4, Backed: true}, {Session: 5, Backed: true}}
	l := reputation.NewLedger(10)
	for i := range 6 {
		id := fmt.Sprint(i)
		l.PutCall("alice", id, reputation.Call{Scope: leadScope, Ballots: agree, Tier: "safe/VALID", Score: 0.8, Conservative: 0.7})
		if _, err := l.Report(ctx, b, "alice", id, i%3 != 0); err != nil {
			t.Fatal(err)
		}
	}
	// Wrong answers that coincide.
	votes := []consensus.Vote{{Session: 1, Label: "OK", Answer: json.RawMessage(`18`)}, {Session: 2, Label: "OK", Answer: json.RawMessage(`18`)},
		{Session: 3, Label: "OK", Answer: json.RawMessage(`18`)}, {Session: 4, Label: "OK", Answer: json.RawMessage(`3`)}, {Session: 5, Label: "OK", Answer: json.RawMessage(`3`)}}
	if err := b.Learn(ctx, leadScope, votes, consensus.Policy{}, consensus.Reliabilities{}); err != nil {
		t.Fatal(err)
	}

	tiers := []string{"safe/VALID", "safe/INVALID"}
	lead, leads, err := b.Leader(ctx, leadScope, sessions)
	if err != nil || !leads {
		t.Fatalf("Leader = %v, %v, %v; want session 3", lead, leads, err)
	}
	maps, err := b.Calibrations(ctx, leadScope, tiers...)
	if err != nil {
		t.Fatal(err)
	}
	coincide, err := b.Coincidence(ctx, leadScope)
	if err != nil {
		t.Fatal(err)
	}
	if maps[0].Total() != 6 || coincide == reputation.DefaultCoincidencePrior().Mean() {
		t.Fatalf("the setup reported %v outcomes and a coincidence of %v", maps[0].Total(), coincide)
	}
	rel, evidence, err := b.Evidence(ctx, leadScope, sessions)
	if err != nil {
		t.Fatal(err)
	}
	// Sessions 1 and 2 never disagreed with the majority of the others.
	records := []reputation.Lead{{Session: 1}, {Session: 2}, {Session: 3, Won: lead.Won, Lost: lead.Lost}}
	want := reputation.Snapshot{Reliabilities: rel, Evidence: evidence, Lead: lead, Leads: true, Records: records, Calibrations: maps, Coincidence: coincide}

	before := store.loads.Load()
	got, err := b.Snapshot(ctx, leadScope, reputation.SnapshotRequest{Sessions: sessions, Leader: sessions, Tiers: tiers, Coincidence: true})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("Snapshot, against the methods one by one (-want +got):\n%s", diff)
	}
	if n := store.loads.Load() - before; n != 1 {
		t.Errorf("Snapshot read the store %d times, want once", n)
	}

	// Only what is asked.
	got, err = b.Snapshot(ctx, leadScope, reputation.SnapshotRequest{Tiers: tiers[1:]})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(reputation.Snapshot{Calibrations: maps[1:]}, got); diff != "" {
		t.Errorf("one map asked (-want +got):\n%s", diff)
	}
	before = store.loads.Load()
	if got, err := b.Snapshot(ctx, leadScope, reputation.SnapshotRequest{}); err != nil || got.Leads || len(got.Calibrations) != 0 || store.loads.Load() != before {
		t.Errorf("nothing asked: %+v, %v, %d reads; want nothing, and no read", got, err, store.loads.Load()-before)
	}

	store.fail = errors.New("down")
	if _, err := b.Snapshot(ctx, leadScope, reputation.SnapshotRequest{Leader: sessions}); !errors.Is(err, store.fail) {
		t.Errorf("a failing store: %v, want its error", err)
	}
}
