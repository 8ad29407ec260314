package pgstore_test

import (
	"testing"

	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/reputation/reputationtest"
)

func TestReputationStore(t *testing.T) {
	reputationtest.TestStore(t, func(t *testing.T) reputation.Store {
		return openDB(t).Reputation()
	})
}

// TestReputationStore_shared runs the suite's check of two servers on one
// database: what one adds the other loads, and concurrent adds through
// both lose nothing.
func TestReputationStore_shared(t *testing.T) {
	reputationtest.TestShared(t, func(t *testing.T) (a, b reputation.Store) {
		dbs := openDBs(t, 2)
		return dbs[0].Reputation(), dbs[1].Reputation()
	})
}

func TestReputationStore_deleteSessions(t *testing.T) {
	reputationtest.TestSessionDeleter(t, func(t *testing.T) reputation.SessionDeleter {
		return openDB(t).Reputation()
	})
}

func TestReputationStore_deletePanel(t *testing.T) {
	reputationtest.TestPanelDeleter(t, func(t *testing.T) reputation.PanelDeleter {
		return openDB(t).Reputation()
	})
}
