package reputation_test

import (
	"testing"

	"github.com/vouchkit/vouch/reputation"
	"github.com/vouchkit/vouch/reputation/reputationtest"
)

func TestMemory(t *testing.T) {
	reputationtest.TestStore(t, func(*testing.T) reputation.Store { return new(reputation.Memory) })
}

func TestMemoryShared(t *testing.T) {
	// Two handles on one Memory are two servers on one database.
	reputationtest.TestShared(t, func(*testing.T) (a, b reputation.Store) {
		m := new(reputation.Memory)
		return m, m
	})
}

func TestMemory_deleteSessions(t *testing.T) {
	reputationtest.TestSessionDeleter(t, func(*testing.T) reputation.SessionDeleter { return new(reputation.Memory) })
}

func TestMemory_deletePanel(t *testing.T) {
	reputationtest.TestPanelDeleter(t, func(*testing.T) reputation.PanelDeleter { return new(reputation.Memory) })
}
