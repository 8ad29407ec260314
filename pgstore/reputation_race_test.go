package pgstore_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/vouchkit/vouch/pgstore"
	"github.com/vouchkit/vouch/reputation"
)

// A panel record deleted while an Add waits for its lock, as DeletePanel
// of another server deletes it, is not lost to the Add: the Add lands
// wholly after the deletion, so the record reads its delta. The test
// holds the row's lock in a transaction of its own, lets an Add (and an
// AddIf whose condition is the zero record) queue behind it, deletes
// the row and commits.
func TestReputationStore_addAfterPanelDeleted(t *testing.T) {
	k := reputation.Key{Session: reputation.PanelSession, Operation: "validate_v3", Kind: "2026-W40 report"}
	delta := reputation.Record{Right: 1}
	for name, add := range map[string]func(ctx context.Context, s *pgstore.ReputationStore) error{
		"Add": func(ctx context.Context, s *pgstore.ReputationStore) error {
			return s.Add(ctx, 0, []reputation.Delta{{Key: k, Delta: delta}})
		},
		"AddIf": func(ctx context.Context, s *pgstore.ReputationStore) error {
			ok, err := s.AddIf(ctx, 0, k, reputation.Record{}, []reputation.Delta{{Key: k, Delta: delta}})
			if err == nil && !ok {
				t.Error("AddIf on a deleted record, which reads zero, reported its condition unmet")
			}
			return err
		},
	} {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			db := openDB(t)
			s := db.Reputation()
			mustAddPG(t, s, reputation.Delta{Key: k, Delta: reputation.Record{Wrong: 3}})

			tx, pid := lockingTx(t, db, `SELECT 1 FROM vouch_reputation WHERE session = 0 FOR UPDATE`)
			defer tx.Rollback(ctx)
			done := make(chan error, 1)
			go func() { done <- add(ctx, s) }()
			blockedBy(t, db, pid)
			if _, err := tx.Exec(ctx, `DELETE FROM vouch_reputation WHERE session = 0`); err != nil {
				t.Fatal(err)
			}
			if err := tx.Commit(ctx); err != nil {
				t.Fatal(err)
			}
			if err := <-done; err != nil {
				t.Fatalf("%s racing a deletion: %v", name, err)
			}
			got, err := s.Load(ctx, []reputation.Key{k})
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff([]reputation.Record{delta}, got); diff != "" {
				t.Errorf("record after %s that waited for a deletion (-want +got):\n%s", name, diff)
			}
		})
	}
}

func mustAddPG(t *testing.T, s *pgstore.ReputationStore, deltas ...reputation.Delta) {
	t.Helper()
	if err := s.Add(context.Background(), 0, deltas); err != nil {
		t.Fatal(err)
	}
}
