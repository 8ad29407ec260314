package reputation_test

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/reputation/reputationtest"
)

// TestBook_Forget: a session that leads (six wins and one loss against
// the others, its confidence higher when right), forgotten, reads as a session
// never seen (no leader, the prior's reliability, and after one report
// what a fresh book reads after the same report), while the other
// sessions' records and the session's records of another kind stay.
func TestBook_Forget(t *testing.T) {
	ctx := context.Background()
	store := new(reputation.Memory)
	b := newBook(t, store)
	sessions := []int64{1, 2, 3}
	other := reputation.Scope{Operation: leadScope.Operation, Kind: "other"}
	won := func(c float64) []reputation.Ballot {
		return []reputation.Ballot{{Session: 1, Backed: true, Confidence: 0.9}, {Session: 2, Backed: true, Confidence: 0.8}, {Session: 3, Opposed: true, Confidence: c}}
	}
	for _, c := range []float64{0.7, 0.8, 0.9, 0.95, 0.85, 0.75} { // six wins, each against the two others
		if err := b.Feedback(ctx, leadScope, won(c), false); err != nil {
			t.Fatal(err)
		}
	}
	lossLow := []reputation.Ballot{{Session: 1, Backed: true}, {Session: 2, Backed: true}, {Session: 3, Opposed: true, Confidence: 0.55}}
	if err := b.Feedback(ctx, leadScope, lossLow, true); err != nil { // one loss, at a low confidence: a slope to learn
		t.Fatal(err)
	}
	if rel, err := b.Reliabilities(ctx, leadScope, []int64{3}); err != nil || rel.Confidence[3].Slope == 0 {
		t.Fatalf("before: session 3's confidence slope %+v (%v), want one learned", rel.Confidence[3], err)
	}
	if err := b.Feedback(ctx, other, won(0.7), false); err != nil {
		t.Fatal(err)
	}
	if l, ok, err := b.Leader(ctx, leadScope, sessions); err != nil || !ok || l.Session != 3 {
		t.Fatalf("before: leader %+v (%v, %v), want session 3", l, ok, err)
	}
	keys := []reputation.Key{
		{Session: 1}, {Session: 1, Operation: leadScope.Operation}, {Session: 1, Operation: leadScope.Operation, Kind: leadScope.Kind},
		{Session: 3, Operation: other.Operation, Kind: other.Kind},
	}
	kept := reputationtest.Load(t, store, keys...)

	if err := b.Forget(ctx, leadScope, 3); err != nil {
		t.Fatal(err)
	}
	if l, ok, err := b.Leader(ctx, leadScope, sessions); err != nil || ok {
		t.Errorf("after Forget: leader %+v (%v, %v), want none", l, ok, err)
	}
	if diff := cmp.Diff(kept, reputationtest.Load(t, store, keys...)); diff != "" {
		t.Errorf("Forget moved records it leaves (-before +after):\n%s", diff)
	}
	mine := []reputation.Key{{Session: 3}, {Session: 3, Operation: leadScope.Operation}, {Session: 3, Operation: leadScope.Operation, Kind: leadScope.Kind}}
	if diff := cmp.Diff(make([]reputation.Record, len(mine)), reputationtest.Load(t, store, mine...)); diff != "" {
		t.Errorf("session 3's records after Forget (-zero +got):\n%s", diff)
	}

	fresh, err := reputation.New(nil, reputation.Options{})
	if err != nil {
		t.Fatal(err)
	}
	lost := []reputation.Ballot{{Session: 3, Backed: true, Confidence: 0.7}}
	for _, book := range []*reputation.Book{b, fresh} {
		if err := book.Feedback(ctx, leadScope, lost, false); err != nil {
			t.Fatal(err)
		}
	}
	got, err := b.Reliabilities(ctx, leadScope, []int64{3})
	if err != nil {
		t.Fatal(err)
	}
	want, err := fresh.Reliabilities(ctx, leadScope, []int64{3})
	if err != nil {
		t.Fatal(err)
	}
	if got.Sessions[3] != want.Sessions[3] || !cmp.Equal(got.Confidence[3], want.Confidence[3]) {
		t.Errorf("forgotten, then one report: %v (slope %+v), want a fresh book's %v (slope %+v)",
			got.Sessions[3], got.Confidence[3], want.Sessions[3], want.Confidence[3])
	}

	if err := b.Forget(ctx, leadScope, -1); !errors.Is(err, reputation.ErrInvalid) {
		t.Errorf("Forget of session -1: %v, want ErrInvalid", err)
	}
	if err := b.Forget(ctx, leadScope); err != nil {
		t.Errorf("Forget of no session: %v", err)
	}
}
