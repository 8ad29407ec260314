package reputation_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/consensus"
	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/reputation/reputationtest"
)

// TestBook_reservedScope: a session identified once, then taught in a
// scope named as the records of its identity are, is not found changed
// when identified again: the scope is refused, and the identity's
// records are the Book's alone.
func TestBook_reservedScope(t *testing.T) {
	ctx := context.Background()
	store := new(reputation.Memory)
	b := newBook(t, store)
	scope := reputation.Scope{Operation: "worker identity"}
	if err := b.Feedback(ctx, scope, []reputation.Ballot{{Session: 7, Backed: true}}, true); !errors.Is(err, reputation.ErrInvalid) {
		t.Errorf("Feedback in %+v = %v, want an error wrapping ErrInvalid", scope, err)
	}
	if changed, err := b.Identify(ctx, 7, "model-a"); err != nil || changed {
		t.Errorf("Identify of a session never identified = %v, %v; want false, nil", changed, err)
	}
}

// TestBook_scopeRefused: a scope whose names are those the Book keeps
// its own records under is refused by every method that takes one, and
// nothing is written.
func TestBook_scopeRefused(t *testing.T) {
	ctx := context.Background()
	for _, scope := range []reputation.Scope{
		{Operation: "any"},
		{Operation: "worker identity"},
		{Operation: "reported calls"},
		{Operation: "validate_v3", Kind: "lead summary"},
		{Operation: "validate_v3", Kind: "confidence u"},
		{Operation: "validate_v3", Kind: "coincidence summary"},
	} {
		store := new(reputation.Memory)
		b := newBook(t, store)
		votes := []consensus.Vote{{Session: 1, Label: "VALID", Confidence: 0.9}, {Session: 2, Label: "INVALID", Confidence: 0.6}}
		ballots := []reputation.Ballot{{Session: 1, Backed: true}, {Session: 2, Opposed: true}}
		calls := map[string]func() error{
			"Reliabilities": func() error { _, err := b.Reliabilities(ctx, scope, []int64{1}); return err },
			"Learn":         func() error { return b.Learn(ctx, scope, votes, consensus.Policy{}, consensus.Reliabilities{}) },
			"Feedback":      func() error { return b.Feedback(ctx, scope, ballots, true) },
			"Forget":        func() error { return b.Forget(ctx, scope, 1) },
			"Leader":        func() error { _, _, err := b.Leader(ctx, scope, []int64{1, 2}); return err },
			"Coincidence":   func() error { _, err := b.Coincidence(ctx, scope); return err },
			"Calibration":   func() error { _, err := b.Calibration(ctx, scope, "safe"); return err },
			"Snapshot": func() error {
				_, err := b.Snapshot(ctx, scope, reputation.SnapshotRequest{Sessions: []int64{1}, Coincidence: true})
				return err
			},
			"Report": func() error {
				l := reputation.NewLedger(1)
				l.PutCall("caller", "t1", reputation.Call{Scope: scope, Ballots: ballots, At: time.Now()})
				_, err := l.Report(ctx, b, "caller", "t1", true)
				return err
			},
		}
		for name, call := range calls {
			if err := call(); !errors.Is(err, reputation.ErrInvalid) {
				t.Errorf("%s in %+v = %v, want an error wrapping ErrInvalid", name, scope, err)
			}
		}
		ids := []int64{1, 2}
		if rel, err := b.Reliabilities(ctx, reputation.Scope{}, ids); err != nil {
			t.Fatal(err)
		} else if diff := cmp.Diff(map[int64]float64{1: 0.8, 2: 0.8}, rel.Sessions); diff != "" {
			t.Errorf("after the refused calls in %+v, reliabilities (-want +got):\n%s", scope, diff)
		}
	}
}

// TestBook_kindWithoutOperation: a Kind is ignored without an Operation,
// by leads and coincidence as by reliabilities.
func TestBook_kindWithoutOperation(t *testing.T) {
	ctx := context.Background()
	b := newBook(t, new(reputation.Memory))
	kinded := reputation.Scope{Kind: "summary"}
	won := []reputation.Ballot{{Session: 1, Backed: true}, {Session: 2, Opposed: true}, {Session: 3, Opposed: true}}
	for range 4 {
		if err := b.Feedback(ctx, kinded, won, true); err != nil {
			t.Fatal(err)
		}
	}
	answers := []consensus.Vote{
		{Session: 1, Label: "A", Answer: 1}, {Session: 2, Label: "B", Answer: 2},
		{Session: 3, Label: "B", Answer: 2}, {Session: 4, Label: "C", Answer: 3},
	}
	if err := b.Learn(ctx, kinded, answers, consensus.Policy{}, consensus.Reliabilities{}); err != nil {
		t.Fatal(err)
	}
	type reading struct {
		Lead        reputation.Lead
		Leads       bool
		Coincidence float64
	}
	read := func(scope reputation.Scope) reading {
		t.Helper()
		l, ok, err := b.Leader(ctx, scope, []int64{1, 2, 3})
		if err != nil {
			t.Fatal(err)
		}
		c, err := b.Coincidence(ctx, scope)
		if err != nil {
			t.Fatal(err)
		}
		return reading{l, ok, c}
	}
	want := read(kinded)
	if !want.Leads {
		t.Fatalf("after four won disagreements, no leader in %+v", kinded)
	}
	if diff := cmp.Diff(want, read(reputation.Scope{})); diff != "" {
		t.Errorf("the scope of no operation reads otherwise than %+v (-%+v +%+v):\n%s", kinded, kinded, reputation.Scope{}, diff)
	}
}

// TestBook_panelSessionRefused: session 0 names the panel's records, not
// a session: learning, feedback and forgetting of it are refused, and the
// panel's records are left as they were.
func TestBook_panelSessionRefused(t *testing.T) {
	ctx := context.Background()
	store := new(reputation.Memory)
	b, err := reputation.New(store, reputation.Options{LearnFromAgreement: true})
	if err != nil {
		t.Fatal(err)
	}
	scope := reputation.Scope{Operation: "validate_v3"}
	agree := []consensus.Vote{{Session: 1, Label: "VALID"}, {Session: 2, Label: "VALID"}, {Session: 3, Label: "INVALID"}}
	for range 20 {
		if err := b.Learn(ctx, scope, agree, consensus.Policy{}, consensus.Reliabilities{}); err != nil {
			t.Fatal(err)
		}
	}
	panel := []reputation.Key{{Session: reputation.PanelSession}, {Session: reputation.PanelSession, Operation: scope.Operation}}
	before := reputationtest.Load(t, store, panel...)
	calls := map[string]func() error{
		"Learn": func() error {
			votes := []consensus.Vote{{Session: 0, Label: "VALID"}, {Session: 9, Label: "INVALID"}}
			return b.Learn(ctx, scope, votes, consensus.Policy{}, consensus.Reliabilities{})
		},
		"Feedback": func() error {
			return b.Feedback(ctx, scope, []reputation.Ballot{{Session: 0, Backed: true}, {Session: 9, Opposed: true}}, true)
		},
		"Forget": func() error { return b.Forget(ctx, scope, 0) },
		"Report": func() error {
			l := reputation.NewLedger(1)
			l.Put("caller", "t1", scope, []reputation.Ballot{{Session: 0, Backed: true}, {Session: 9, Opposed: true}})
			_, err := l.Report(ctx, b, "caller", "t1", true)
			return err
		},
	}
	for name, call := range calls {
		if err := call(); !errors.Is(err, reputation.ErrInvalid) {
			t.Errorf("%s of session 0 = %v, want an error wrapping ErrInvalid", name, err)
		}
	}
	if diff := cmp.Diff(before, reputationtest.Load(t, store, panel...)); diff != "" {
		t.Errorf("the refused calls changed the panel's records (-before +after):\n%s", diff)
	}
}
