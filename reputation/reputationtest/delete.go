package reputationtest

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/reputation"
)

// TestSessionDeleter runs the suite of a [reputation.SessionDeleter]
// against stores made by newStore, as [TestStore] does: DeleteSessions
// takes every record of its sessions to zero and no other, refuses a
// session that is not positive, and lands wholly before or after a
// concurrent Add.
func TestSessionDeleter(t *testing.T, newStore func(t *testing.T) reputation.SessionDeleter) {
	t.Run("Deletes", func(t *testing.T) { testDeletes(t, newStore(t)) })
	t.Run("Refuses", func(t *testing.T) { testDeleteRefuses(t, newStore(t)) })
	t.Run("Atomic", func(t *testing.T) { testDeleteAtomic(t, newStore(t)) })
}

// testDeletes: the records of sessions 1 and 256 go, at every operation
// and kind; session 2's and the panel's stay; a deleted key learns anew
// from zero.
func testDeletes(t *testing.T, s reputation.SessionDeleter) {
	gone := []reputation.Key{
		{Session: 1},
		{Session: 1, Operation: "validate_v3"},
		{Session: 1, Operation: "validate_v3", Kind: "fact"},
		{Session: 1, Operation: "any", Kind: "lead fact"},
		{Session: 256, Operation: "delegate_v3"},
	}
	kept := []reputation.Key{
		{Session: 2, Operation: "validate_v3"},
		{Session: 257},
		{Session: reputation.PanelSession, Operation: "validate_v3"},
	}
	for _, k := range append(append([]reputation.Key{}, gone...), kept...) {
		mustAdd(t, s, 0, reputation.Delta{Key: k, Delta: reputation.Record{Right: 2, Wrong: 1}})
	}
	if err := s.DeleteSessions(context.Background(), []int64{1, 256}); err != nil {
		t.Fatalf("DeleteSessions(1, 256): %v", err)
	}
	if diff := cmp.Diff(make([]reputation.Record, len(gone)), Load(t, s, gone...)); diff != "" {
		t.Errorf("records of the deleted sessions (-want +got):\n%s", diff)
	}
	want := []reputation.Record{{Right: 2, Wrong: 1}, {Right: 2, Wrong: 1}, {Right: 2, Wrong: 1}}
	if diff := cmp.Diff(want, Load(t, s, kept...), tolerance); diff != "" {
		t.Errorf("records of other sessions and the panel (-want +got):\n%s", diff)
	}
	mustAdd(t, s, 0, reputation.Delta{Key: gone[0], Delta: reputation.Record{Wrong: 1}})
	if diff := cmp.Diff([]reputation.Record{{Wrong: 1}}, Load(t, s, gone[0]), tolerance); diff != "" {
		t.Errorf("a deleted record after one add (-want +got):\n%s", diff)
	}
	if err := s.DeleteSessions(context.Background(), nil); err != nil {
		t.Errorf("DeleteSessions of no session: %v", err)
	}
}

// testDeleteRefuses: a session that is not positive is refused, and
// nothing is deleted; so is a call with a cancelled context.
func testDeleteRefuses(t *testing.T, s reputation.SessionDeleter) {
	k := reputation.Key{Session: 4, Operation: "validate_v3"}
	mustAdd(t, s, 0, reputation.Delta{Key: k, Delta: reputation.Record{Right: 1}})
	for _, sessions := range [][]int64{{4, reputation.PanelSession}, {-4, 4}} {
		if err := s.DeleteSessions(context.Background(), sessions); !errors.Is(err, reputation.ErrInvalid) {
			t.Errorf("DeleteSessions(%v): error %v, want ErrInvalid", sessions, err)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.DeleteSessions(ctx, []int64{4}); !errors.Is(err, context.Canceled) {
		t.Errorf("DeleteSessions with a cancelled context: error %v, want context.Canceled", err)
	}
	if diff := cmp.Diff([]reputation.Record{{Right: 1}}, Load(t, s, k), tolerance); diff != "" {
		t.Errorf("after refused deletions (-want +got):\n%s", diff)
	}
}

// testDeleteAtomic: Adds of one unit to two keys of a session, racing
// deletions of it, leave the two keys equal: no deletion lands between
// the deltas of one Add.
func testDeleteAtomic(t *testing.T, s reputation.SessionDeleter) {
	ctx := context.Background()
	a, b := reputation.Key{Session: 5}, reputation.Key{Session: 5, Operation: "validate_v3", Kind: "fact"}
	const writers, each = 4, 50
	var adds sync.WaitGroup
	for range writers {
		adds.Go(func() {
			for range each {
				if err := s.Add(ctx, 0, []reputation.Delta{{Key: a, Delta: reputation.Record{Right: 1}}, {Key: b, Delta: reputation.Record{Right: 1}}}); err != nil {
					t.Errorf("Add: %v", err)
					return
				}
			}
		})
	}
	done := make(chan struct{})
	var deletes sync.WaitGroup
	deletes.Go(func() {
		for {
			select {
			case <-done:
				return
			default:
			}
			if err := s.DeleteSessions(ctx, []int64{5}); err != nil {
				t.Errorf("DeleteSessions: %v", err)
				return
			}
		}
	})
	adds.Wait()
	close(done)
	deletes.Wait()
	got := Load(t, s, a, b)
	if got[0] != got[1] || got[0].Right > writers*each {
		t.Errorf("after adds racing deletions: %+v and %+v, want two equal records of at most %d", got[0], got[1], writers*each)
	}
}
