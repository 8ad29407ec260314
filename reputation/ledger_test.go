package reputation_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/reputation"
)

// TestLedger_callersKeptApart: one caller's stream of calls forgets its
// own oldest calls, never another caller's, once it holds the most: bob's
// call stays reportable by its trace id however many calls alice makes.
func TestLedger_callersKeptApart(t *testing.T) {
	l := reputation.NewLedger(4)
	l.Put("bob", "b1", scope, nil)
	for i := range 100 {
		l.Put("alice", fmt.Sprint("a", i), scope, nil)
	}
	if _, _, ok := l.Get("bob", "b1"); !ok {
		t.Error("alice's calls made bob's call b1 forgotten")
	}
	for i := 97; i < 100; i++ {
		if _, _, ok := l.Get("alice", fmt.Sprint("a", i)); !ok {
			t.Errorf("alice's latest call a%d forgotten", i)
		}
	}
	if _, _, ok := l.Get("alice", "a96"); ok {
		t.Error("a96 is remembered beyond the bound")
	}
	// A new caller gets room from the caller holding the most.
	l.Put("carol", "c1", scope, nil)
	if _, _, ok := l.Get("carol", "c1"); !ok {
		t.Error("carol's call forgotten")
	}
	if _, _, ok := l.Get("bob", "b1"); !ok {
		t.Error("carol's call made bob's call forgotten")
	}
	if _, _, ok := l.Get("alice", "a97"); ok {
		t.Error("a97, alice's oldest, should have made room for carol's")
	}
}

// TestLedger_reportOnceAfterForgetting: a call the ledger forgot and
// remembers again (as a report by receipt rebuilds it) counts its report
// once: the report is kept in the book's store, not only in memory.
func TestLedger_reportOnceAfterForgetting(t *testing.T) {
	ctx := context.Background()
	store := new(reputation.Memory)
	b, err := reputation.New(store, reputation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	keys := []reputation.Key{{Session: 1}, {Session: 2}}
	load := func() []reputation.Record {
		t.Helper()
		recs, err := store.Load(ctx, keys)
		if err != nil {
			t.Fatal(err)
		}
		return recs
	}
	call := reputation.Call{Scope: scope, Ballots: []reputation.Ballot{{Session: 1, Backed: true}, {Session: 2}}}
	l := reputation.NewLedger(1)
	l.PutCall("alice", "t1", call)
	if _, err := l.Report(ctx, b, "alice", "t1", true); err != nil {
		t.Fatal(err)
	}
	once := load()
	l.PutCall("alice", "t2", reputation.Call{Scope: scope}) // forgets t1
	if _, ok := l.Call("alice", "t1"); ok {
		t.Fatal("t1 is remembered beyond the bound")
	}
	l.KeepCall("alice", "t1", call) // rebuilt, as from its receipt
	if _, err := l.Report(ctx, b, "alice", "t1", true); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(once, load()); diff != "" {
		t.Errorf("the same report after forgetting counted twice (-once +twice):\n%s", diff)
	}
	// The opposite report replaces the first, as it does in memory.
	if _, err := l.Report(ctx, b, "alice", "t1", false); err != nil {
		t.Fatal(err)
	}
	w := float64(reputation.DefaultFeedbackWeight)
	if diff := cmp.Diff([]reputation.Record{{Wrong: w}, {}}, load()); diff != "" { // a dissenter gains nothing when the winner was wrong
		t.Errorf("the replacing report (-want +got):\n%s", diff)
	}
}
