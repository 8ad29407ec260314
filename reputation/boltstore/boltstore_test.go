package boltstore_test

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/reputation/boltstore"
	"github.com/vouchkit/vouch/reputation/reputationtest"
)

func open(t *testing.T, path string) *boltstore.Store {
	t.Helper()
	s, err := boltstore.Open(path, 0)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestStore(t *testing.T) {
	reputationtest.TestStore(t, func(t *testing.T) reputation.Store {
		s := open(t, filepath.Join(t.TempDir(), "reputation.db"))
		t.Cleanup(func() { s.Close() })
		return s
	})
}

func TestStore_deleteSessions(t *testing.T) {
	reputationtest.TestSessionDeleter(t, func(t *testing.T) reputation.SessionDeleter {
		s := open(t, filepath.Join(t.TempDir(), "reputation.db"))
		t.Cleanup(func() { s.Close() })
		return s
	})
}

func TestStore_deletePanel(t *testing.T) {
	reputationtest.TestPanelDeleter(t, func(t *testing.T) reputation.PanelDeleter {
		s := open(t, filepath.Join(t.TempDir(), "reputation.db"))
		t.Cleanup(func() { s.Close() })
		return s
	})
}

// TestStore_reopen checks that a restart keeps what was learned, to the
// bit: a record read back after Close and Open is the one computed.
func TestStore_reopen(t *testing.T) {
	path := filepath.Join(t.TempDir(), "reputation.db")
	ctx := context.Background()
	keys := []reputation.Key{{Session: 3}, {Session: 3, Operation: "validate_v3", Kind: "tool_output"}, {Session: reputation.PanelSession}}
	deltas := []reputation.Delta{
		{Key: keys[0], Delta: reputation.Record{Right: 0.9, Wrong: 0.1}},
		{Key: keys[1], Delta: reputation.Record{Right: 1.0 / 3, Wrong: 2.0 / 3}},
		{Key: keys[2], Delta: reputation.Record{Right: 0.42, Wrong: 0.07}},
		{Key: keys[0], Delta: reputation.Record{Right: 7, Wrong: 0.3}},
	}
	var want []reputation.Record
	for _, k := range keys {
		var r reputation.Record
		for _, d := range deltas {
			if d.Key == k {
				r = r.Add(d.Delta, 5)
			}
		}
		want = append(want, r)
	}

	s := open(t, path)
	if err := s.Add(ctx, 5, deltas); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s = open(t, path)
	defer s.Close()
	got, err := s.Load(ctx, keys)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("records after a restart (-want +got):\n%s", diff)
	}
}

// TestOpen_locked checks that a second process cannot open a file the
// first holds: one file is one process's store.
func TestOpen_locked(t *testing.T) {
	path := filepath.Join(t.TempDir(), "reputation.db")
	s := open(t, path)
	defer s.Close()
	if _, err := boltstore.Open(path, 1); err == nil {
		t.Fatal("a second Open of a locked file succeeded")
	}
}
