package reputation_test

import (
	"context"
	"errors"
	"math"
	"testing"

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
	if rel.Sessions[1] != reputation.DefaultPrior().Mean() || rel.Prior != reputation.DefaultPrior().Mean() || rel.Correlation != 0 {
		t.Errorf("a new book reads %+v, want every session at the prior's mean %v and no correlation", rel, reputation.DefaultPrior().Mean())
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
	p := reputation.DefaultOutcomePrior()
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
		{LeadLevel: -1},
		{LeadLevel: 0.6},
		{LeadLevel: math.NaN()},
		{LeadMargin: -0.1},
		{LeadMargin: 1.5},
		{LeadMargin: math.NaN()},
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
