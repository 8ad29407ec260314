package reputationtest

import (
	"context"
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/reputation"
)

// TestPanelDeleter runs the suite of a [reputation.PanelDeleter] against
// stores made by newStore, as [TestStore] does: DeletePanel deletes the
// panel's records of one operation whose kinds sort before the bound,
// byte by byte, and no other, and refuses an empty operation and a bound
// that is not UTF-8 or holds a NUL byte; when the store is a
// [reputation.ConditionalStore] as well, an AddIf leaves no record of its
// condition that it added nothing to.
func TestPanelDeleter(t *testing.T, newStore func(t *testing.T) reputation.PanelDeleter) {
	t.Run("Deletes", func(t *testing.T) { testPanelDeletes(t, newStore(t)) })
	t.Run("Refuses", func(t *testing.T) { testPanelDeleteRefuses(t, newStore(t)) })
	if _, ok := newStore(t).(reputation.ConditionalStore); ok {
		t.Run("AddIfLeavesNoRecord", func(t *testing.T) {
			testAddIfLeavesNoRecord(t, newStore(t).(reputation.ConditionalStore))
		})
	}
}

// testPanelDeletes: under the panel's operation "reported calls", the
// kinds before "w2" go ("", "W9" and "w1 a", upper case sorting first);
// "w2", "w2 b", "w3" and "é" stay, as do the kind "w1 a" of another
// operation and of a session; a deleted key reads zero and learns anew.
func testPanelDeletes(t *testing.T, s reputation.PanelDeleter) {
	const op = "reported calls"
	gone := []reputation.Key{
		{Session: reputation.PanelSession, Operation: op},
		{Session: reputation.PanelSession, Operation: op, Kind: "W9"},
		{Session: reputation.PanelSession, Operation: op, Kind: "w1 a"},
	}
	kept := []reputation.Key{
		{Session: reputation.PanelSession, Operation: op, Kind: "w2"},
		{Session: reputation.PanelSession, Operation: op, Kind: "w2 b"},
		{Session: reputation.PanelSession, Operation: op, Kind: "w3"},
		{Session: reputation.PanelSession, Operation: op, Kind: "é"},
		{Session: reputation.PanelSession, Operation: "validate", Kind: "w1 a"},
		{Session: reputation.PanelSession, Operation: "reported call", Kind: "w1 a"},
		{Session: 1, Operation: op, Kind: "w1 a"},
		{Session: reputation.PanelSession},
	}
	var deltas []reputation.Delta
	for _, k := range append(append([]reputation.Key(nil), gone...), kept...) {
		deltas = append(deltas, reputation.Delta{Key: k, Delta: reputation.Record{Right: 1}})
	}
	mustAdd(t, s, 0, deltas...)

	n, err := s.DeletePanel(context.Background(), op, "w2")
	if err != nil {
		t.Fatalf("DeletePanel: %v", err)
	}
	if n != len(gone) {
		t.Errorf("DeletePanel deleted %d records, want %d", n, len(gone))
	}
	if diff := cmp.Diff(make([]reputation.Record, len(gone)), Load(t, s, gone...)); diff != "" {
		t.Errorf("records before the bound (-want +got):\n%s", diff)
	}
	want := make([]reputation.Record, len(kept))
	for i := range want {
		want[i] = reputation.Record{Right: 1}
	}
	if diff := cmp.Diff(want, Load(t, s, kept...)); diff != "" {
		t.Errorf("records that stay (-want +got):\n%s", diff)
	}
	if n, err := s.DeletePanel(context.Background(), op, "w2"); err != nil || n != 0 {
		t.Errorf("DeletePanel again = %d, %v; want 0, nil", n, err)
	}
	mustAdd(t, s, 0, reputation.Delta{Key: gone[2], Delta: reputation.Record{Wrong: 1}})
	if diff := cmp.Diff([]reputation.Record{{Wrong: 1}}, Load(t, s, gone[2])); diff != "" {
		t.Errorf("a deleted record learning anew (-want +got):\n%s", diff)
	}
}

// testAddIfLeavesNoRecord: an AddIf conditioned on a record never added
// to, and adding nothing to it, leaves it never added to, so that
// DeletePanel counts only the record the deltas made.
func testAddIfLeavesNoRecord(t *testing.T, s reputation.ConditionalStore) {
	const op = "reported calls"
	cond := reputation.Key{Session: reputation.PanelSession, Operation: op, Kind: "a"}
	added := reputation.Key{Session: reputation.PanelSession, Operation: op, Kind: "b"}
	if !addIf(t, s, cond, reputation.Record{}, reputation.Delta{Key: added, Delta: reputation.Record{Right: 1}}) {
		t.Fatal("AddIf on a record never added to, given the zero Record, added nothing")
	}
	if n, err := s.(reputation.PanelDeleter).DeletePanel(context.Background(), op, "z"); err != nil || n != 1 {
		t.Errorf("DeletePanel after the AddIf = %d, %v; want 1 (the record added to), nil", n, err)
	}
}

// testPanelDeleteRefuses: an empty operation, or one no key holds, is
// refused, deleting nothing, and so is a bound no kind holds, not UTF-8
// ("\xff", which would sort after every kind) or with a NUL byte; a
// cancelled context deletes nothing.
func testPanelDeleteRefuses(t *testing.T, s reputation.PanelDeleter) {
	k := reputation.Key{Session: reputation.PanelSession, Operation: "reported calls", Kind: "w1"}
	mustAdd(t, s, 0, reputation.Delta{Key: k, Delta: reputation.Record{Right: 1}})
	if _, err := s.DeletePanel(context.Background(), "", "w9"); !errors.Is(err, reputation.ErrInvalid) {
		t.Errorf("DeletePanel of no operation = %v, want an error wrapping ErrInvalid", err)
	}
	if _, err := s.DeletePanel(context.Background(), "reported\x00calls", "w9"); !errors.Is(err, reputation.ErrInvalid) {
		t.Errorf("DeletePanel of an operation with a NUL byte = %v, want an error wrapping ErrInvalid", err)
	}
	for _, before := range []string{"\xff", "w1\x00"} {
		if n, err := s.DeletePanel(context.Background(), "reported calls", before); !errors.Is(err, reputation.ErrInvalid) || n != 0 {
			t.Errorf("DeletePanel before the bound %q = %d, %v; want 0 and an error wrapping ErrInvalid", before, n, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := s.DeletePanel(ctx, "reported calls", "w9"); err == nil {
		t.Error("DeletePanel with a cancelled context succeeded")
	}
	if diff := cmp.Diff([]reputation.Record{{Right: 1}}, Load(t, s, k)); diff != "" {
		t.Errorf("after the refused deletes (-want +got):\n%s", diff)
	}
}
