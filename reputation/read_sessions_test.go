package reputation_test

import (
	"context"
	"errors"
	"testing"

	"github.com/vouchkit/vouch/reputation"
)

// TestBook_readsRefuseNonSessions: Evidence, Reliabilities, Leader and
// Snapshot refuse a session that is not positive, as Feedback and Forget
// do, rather than read the panel's records (PanelSession, 0) as a
// session's.
func TestBook_readsRefuseNonSessions(t *testing.T) {
	ctx := context.Background()
	b := newBook(t, new(reputation.Memory))
	ballots := []reputation.Ballot{{Session: 1, Backed: true}, {Session: 2, Backed: true}, {Session: 3, Opposed: true}}
	if err := b.Feedback(ctx, leadScope, ballots, true); err != nil {
		t.Fatal(err)
	}
	for _, s := range []int64{reputation.PanelSession, -1} {
		sessions := []int64{1, s}
		reads := map[string]func() error{
			"Evidence": func() error { _, _, err := b.Evidence(ctx, leadScope, sessions); return err },
			"Reliabilities": func() error {
				_, err := b.Reliabilities(ctx, leadScope, sessions)
				return err
			},
			"Leader": func() error { _, _, err := b.Leader(ctx, leadScope, sessions); return err },
			"Snapshot.Sessions": func() error {
				_, err := b.Snapshot(ctx, leadScope, reputation.SnapshotRequest{Sessions: sessions})
				return err
			},
			"Snapshot.Leader": func() error {
				_, err := b.Snapshot(ctx, leadScope, reputation.SnapshotRequest{Leader: sessions})
				return err
			},
		}
		for name, read := range reads {
			if err := read(); !errors.Is(err, reputation.ErrInvalid) {
				t.Errorf("%s with session %d: err %v, want one wrapping ErrInvalid", name, s, err)
			}
		}
	}
}
