package reputation_test

import (
	"context"
	"errors"
	"math"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/google/go-cmp/cmp/cmpopts"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/reputation"
)

var scope = reputation.Scope{Operation: "validate_v3", Kind: "fact"}

func newBook(t *testing.T, store reputation.Store) *reputation.Book {
	t.Helper()
	b, err := reputation.New(store, reputation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func reliabilities(t *testing.T, b *reputation.Book, sessions ...int64) consensus.Reliabilities {
	t.Helper()
	rel, err := b.Reliabilities(context.Background(), scope, sessions)
	if err != nil {
		t.Fatal(err)
	}
	return rel
}

func TestBookUnknownReadsPrior(t *testing.T) {
	b := newBook(t, nil)
	rel := reliabilities(t, b, 1, 2)
	if rel.Sessions[1] != reputation.DefaultPrior.Mean() || rel.Prior != reputation.DefaultPrior.Mean() || rel.Correlation != 0 {
		t.Errorf("a new book reads %+v, want every session at the prior's mean %v and no correlation", rel, reputation.DefaultPrior.Mean())
	}
}

func TestBookFeedback(t *testing.T) {
	store := new(reputation.Memory)
	b := newBook(t, store)
	ctx := context.Background()
	// Session 2 dissents with another answer (not known right when the
	// outcome was wrong), session 4 with the other verdict (then right).
	ballots := []reputation.Ballot{{Session: 1, Backed: true}, {Session: 2, Backed: false}, {Session: 4, Opposed: true}}
	if err := b.Feedback(ctx, scope, ballots, true); err != nil {
		t.Fatal(err)
	}
	if err := b.Feedback(ctx, scope, ballots, false); err != nil {
		t.Fatal(err)
	}
	w := float64(reputation.DefaultFeedbackWeight)
	keys := []reputation.Key{{Session: 1}, {Session: 2}, {Session: 1, Operation: scope.Operation, Kind: scope.Kind}, {Session: 4}}
	recs, _ := store.Load(ctx, keys)
	want := []reputation.Record{{Right: w, Wrong: w}, {Wrong: w}, {Right: w, Wrong: w}, {Right: w, Wrong: w}}
	for i := range want {
		if recs[i] != want[i] {
			t.Errorf("%+v: %+v, want %+v", keys[i], recs[i], want[i])
		}
	}
	// One report against a session never seen counts FeedbackWeight
	// votes against the prior's: Beta(32, 8) becomes Beta(32, 12).
	p := reputation.DefaultOutcomePrior
	if before := reliabilities(t, b, 3).Sessions[3]; before != p.Mean() {
		t.Errorf("session 3 reads %v before any report, want the prior's %v", before, p.Mean())
	}
	if err := b.Feedback(ctx, scope, []reputation.Ballot{{Session: 3, Backed: true}}, false); err != nil {
		t.Fatal(err)
	}
	want3 := p.Right / (p.Right + p.Wrong + w)
	if after := reliabilities(t, b, 3).Sessions[3]; math.Abs(after-want3) > 1e-12 {
		t.Errorf("one report of a wrong outcome moved session 3 to %v, want %v", after, want3)
	}
}

func TestNewRefuses(t *testing.T) {
	for _, o := range []reputation.Options{
		{Prior: reputation.Prior{Right: -1, Wrong: 1}},
		{Horizon: -5},
		{FeedbackWeight: math.Inf(1)},
		{FeedbackWeight: -1},
		{CalibrationPrior: -1},
		{CalibrationPrior: math.Inf(1)},
		// Counts whose sums overflow: the review's prior read NaN.
		{Prior: reputation.Prior{Right: 1e308, Wrong: 1e308}},
		{Prior: reputation.Prior{Right: 4, Wrong: reputation.MaxCount * 2}},
		{Horizon: 1e308},
		{FeedbackWeight: 1e308},
	} {
		if _, err := reputation.New(nil, o); !errors.Is(err, reputation.ErrInvalid) {
			t.Errorf("New(%+v): error %v, want ErrInvalid", o, err)
		}
	}
	// The largest counts allowed read finite reliabilities, however much
	// evidence the largest feedback adds.
	o := reputation.Options{Prior: reputation.Prior{Right: reputation.MaxCount, Wrong: reputation.MaxCount},
		Horizon: reputation.MaxCount, FeedbackWeight: reputation.MaxCount}
	b, err := reputation.New(nil, o)
	if err != nil {
		t.Fatalf("New(%+v): %v", o, err)
	}
	ctx := context.Background()
	for range 3 {
		if err := b.Feedback(ctx, reputation.Scope{}, []reputation.Ballot{{Session: 1, Backed: true}, {Session: 2}}, true); err != nil {
			t.Fatal(err)
		}
	}
	rel, err := b.Reliabilities(ctx, reputation.Scope{}, []int64{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	for s, p := range rel.Sessions {
		if !(p > 0 && p < 1) {
			t.Errorf("session %d reads reliability %v at the largest counts, want a number in (0, 1)", s, p)
		}
	}
}

// TestCheckDeltasRefusesOverflow: a delta too large to add is refused.
func TestCheckDeltasRefusesOverflow(t *testing.T) {
	d := []reputation.Delta{{Key: reputation.Key{Session: 1}, Delta: reputation.Record{Right: 1e308}}}
	if err := reputation.CheckDeltas(0, d); !errors.Is(err, reputation.ErrInvalid) {
		t.Errorf("CheckDeltas of a count of 1e308: error %v, want ErrInvalid", err)
	}
}

func TestLedger(t *testing.T) {
	l := reputation.NewLedger(2)
	b := []reputation.Ballot{{Session: 1, Backed: true}}
	l.Put("alice", "a", scope, b)
	l.Put("alice", "b", scope, nil)
	l.Put("alice", "a", reputation.Scope{Operation: "x"}, b) // replaces, forgets nothing
	if sc, got, ok := l.Get("alice", "a"); !ok || sc.Operation != "x" || len(got) != 1 {
		t.Errorf("Get(alice, a) = %+v, %v, %v", sc, got, ok)
	}
	if _, _, ok := l.Get("bob", "a"); ok {
		t.Error("bob finds alice's call a")
	}
	if l.Keep("alice", "a", scope, nil) {
		t.Error("Keep replaced alice's call a")
	}
	l.Put("alice", "c", scope, nil) // forgets the oldest, a
	if _, _, ok := l.Get("alice", "a"); ok {
		t.Error("a is remembered beyond the bound")
	}
	for _, id := range []string{"b", "c"} {
		if _, _, ok := l.Get("alice", id); !ok {
			t.Errorf("%s forgotten", id)
		}
	}
	// A call remembered with its calibration map and score.
	want := reputation.Call{Scope: scope, Ballots: b, Tier: "safe", Score: 0.9375}
	l.PutCall("alice", "d", want)
	if got, ok := l.Call("alice", "d"); !ok || got.Tier != want.Tier || got.Score != want.Score || len(got.Ballots) != 1 {
		t.Errorf("Call(d) = %+v, %v; want %+v", got, ok, want)
	}
}

// TestLedgerReportsOnce: a call's report counts once, by its caller only;
// a report that says the opposite replaces the first, exactly while the
// records are not full, and moves a full record by the weight at most;
// concurrent reports of one call count once.
func TestLedgerReportsOnce(t *testing.T) {
	ctx := context.Background()
	store := new(reputation.Memory)
	b, err := reputation.New(store, reputation.Options{Horizon: 20})
	if err != nil {
		t.Fatal(err)
	}
	l := reputation.NewLedger(10)
	sc := reputation.Scope{}
	ballots := []reputation.Ballot{{Session: 1, Backed: true}, {Session: 2, Backed: true}, {Session: 3}}
	l.Put("alice", "t", sc, ballots)
	keys := []reputation.Key{{Session: 1}, {Session: 2}, {Session: 3}}
	load := func() []reputation.Record {
		recs, err := store.Load(ctx, keys)
		if err != nil {
			t.Fatal(err)
		}
		return recs
	}
	if ok, err := l.Report(ctx, b, "bob", "t", false); ok || err != nil {
		t.Errorf("bob's report on alice's call: ok %v, %v; want not found", ok, err)
	}
	if diff := cmp.Diff([]reputation.Record{{}, {}, {}}, load()); diff != "" {
		t.Fatalf("bob's report moved the records (-want +got):\n%s", diff)
	}
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if ok, err := l.Report(ctx, b, "alice", "t", false); !ok || err != nil {
				t.Errorf("alice's report: ok %v, %v", ok, err)
			}
		})
	}
	wg.Wait()
	w := float64(reputation.DefaultFeedbackWeight)
	wrong := []reputation.Record{{Wrong: w}, {Wrong: w}, {}}
	if diff := cmp.Diff(wrong, load()); diff != "" {
		t.Errorf("eight reports of a wrong outcome (-once +got):\n%s", diff)
	}
	if _, err := l.Report(ctx, b, "alice", "t", true); err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]reputation.Record{{Right: w}, {Right: w}, {Wrong: w}}, load()); diff != "" {
		t.Errorf("a right outcome in place of a wrong one (-as if only right +got):\n%s", diff)
	}

	// A full record: the flip moves at most the weight, from one count to
	// the other, and forgets nothing else.
	if err := store.Add(ctx, 20, []reputation.Delta{{Key: keys[0], Delta: reputation.Record{Right: 30, Wrong: 30}}}); err != nil {
		t.Fatal(err)
	}
	full := load()[0]
	if _, err := l.Report(ctx, b, "alice", "t", false); err != nil {
		t.Fatal(err)
	}
	got := load()[0]
	if diff := cmp.Diff(reputation.Record{Right: full.Right - w, Wrong: full.Wrong + w}, got, cmpopts.EquateApprox(0, 1e-12)); diff != "" {
		t.Errorf("a flip on a full record (-want +got):\n%s", diff)
	}
}
