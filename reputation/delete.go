package reputation

import (
	"context"
	"fmt"
)

// A SessionDeleter is a [Store] that can delete every record of a
// session at once, whatever its operation and kind: what a [Book] needs
// to forget a session in every scope ([Book.Identify]). [Memory],
// boltstore.Store and pgstore's ReputationStore are SessionDeleters.
type SessionDeleter interface {
	Store
	// DeleteSessions makes every record of sessions read as the zero
	// Record, atomically: an Add of another server lands wholly before
	// or wholly after it. It returns an error wrapping ErrInvalid for a
	// session that is not positive (the panel's records, PanelSession,
	// belong to no session), deleting nothing, and ctx's error when ctx
	// is done before it writes.
	DeleteSessions(ctx context.Context, sessions []int64) error
}

// CheckSessions reports the first session that is not positive, as an
// error wrapping ErrInvalid: what a SessionDeleter refuses.
func CheckSessions(sessions []int64) error {
	for i, s := range sessions {
		if s <= 0 {
			return fmt.Errorf("%w: sessions[%d]: %d is not a session (positive)", ErrInvalid, i, s)
		}
	}
	return nil
}

// checkBallots reports a ballot of a session that is not positive: 0
// names the panel's records (PanelSession), which no ballot may teach.
func checkBallots(ballots []Ballot) error {
	for i, bl := range ballots {
		if bl.Session <= 0 {
			return fmt.Errorf("%w: ballots[%d]: session %d is not positive", ErrInvalid, i, bl.Session)
		}
	}
	return nil
}
