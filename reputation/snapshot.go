package reputation

import (
	"context"
	"fmt"
	"slices"

	"github.com/vouchkit/vouch/consensus"
)

// A SnapshotRequest names what one call needs of a scope, for
// [Book.Snapshot] to read at once.
type SnapshotRequest struct {
	// Sessions holds the sessions whose reliabilities, and the evidence
	// behind each, to read (see [Book.Evidence]); none reads none.
	Sessions []int64
	// Leader holds the sessions to find the leader among (see
	// [Book.Leader]); none reads no leader.
	Leader []int64
	// Tiers names the calibration maps to read (see [Book.Calibrations]).
	Tiers []string
	// Coincidence asks for the chance that two wrong answers coincide
	// (see [Book.Coincidence]).
	Coincidence bool
}

// A Snapshot is what [Book.Snapshot] read of a scope for one call.
type Snapshot struct {
	// Reliabilities are the reliabilities of the sessions asked, as
	// [Book.Evidence] reads them; zero when none was asked.
	Reliabilities consensus.Reliabilities
	// Evidence holds the evidence behind each of them, as
	// [Book.Evidence] returns it; nil when none was asked.
	Evidence map[int64]Record
	// Lead is the leader's record, when Leads.
	Lead Lead
	// Leads reports whether a leader was found among the sessions asked.
	Leads bool
	// Records holds the record of each session of Leader, in its order,
	// against the majority of the other votes of its calls, whether or
	// not it leads (a session of no record holds a zero Lead but for its
	// Session); nil when no leader was asked for.
	Records []Lead
	// Calibrations holds the maps of the tiers asked, in their order.
	Calibrations []*Calibration
	// Coincidence is the chance that two wrong answers coincide, when
	// asked; 0 otherwise.
	Coincidence float64
}

// Snapshot reads what r asks of scope in one store read: the
// reliabilities of r.Sessions as [Book.Evidence] reads them, the leader
// among r.Leader as [Book.Leader] finds it with each one's record, the
// maps of r.Tiers as
// [Book.Calibrations] builds them, and the chance [Book.Coincidence]
// returns. Each figure is the one its own method would return on the same
// records; a caller that needs several saves the store one round trip per
// figure, and reads them all from one state of the store. A session in
// r.Sessions or r.Leader that is not positive is refused with an error
// wrapping ErrInvalid, as Evidence and Leader refuse it.
func (b *Book) Snapshot(ctx context.Context, scope Scope, r SnapshotRequest) (Snapshot, error) {
	if err := scope.check(); err != nil {
		return Snapshot{}, err
	}
	if err := CheckSessions(r.Sessions); err != nil {
		return Snapshot{}, fmt.Errorf("snapshot: %w", err)
	}
	if err := CheckSessions(r.Leader); err != nil {
		return Snapshot{}, fmt.Errorf("snapshot leader: %w", err)
	}
	buf := pooled[Key](&b.keyBufs)
	defer b.keyBufs.Put(buf)
	levels := scope.levels()
	keys := slices.Grow((*buf)[:0], len(r.Sessions)*(levels+len(slopeKinds))+1+len(r.Leader)*(1+levels)+calibrationRecords*len(r.Tiers)+1)
	if len(r.Sessions) > 0 {
		keys = evidenceKeys(keys, scope, r.Sessions)
	}
	evidence := len(keys)
	keys = leaderKeys(keys, scope, r.Leader)
	lead := len(keys)
	keys = b.appendCalibrationKeys(keys, scope, r.Tiers)
	maps := len(keys)
	if r.Coincidence {
		keys = append(keys, coincidenceKey(scope))
	}
	var snap Snapshot
	if len(keys) == 0 {
		return snap, nil
	}
	*buf = keys
	recs, err := b.store.Load(ctx, keys)
	if err != nil {
		return Snapshot{}, err
	}
	if len(r.Sessions) > 0 {
		snap.Reliabilities, snap.Evidence = b.evidenceOf(scope, r.Sessions, recs[:evidence])
	}
	if len(r.Leader) > 0 {
		snap.Lead, snap.Leads = b.leaderOf(scope, r.Leader, recs[evidence:lead])
		snap.Records = make([]Lead, len(r.Leader))
		for i, s := range r.Leader {
			snap.Records[i] = leadOf(s, recs[evidence+i])
		}
	}
	snap.Calibrations = b.calibrationsOf(r.Tiers, recs[lead:maps])
	if r.Coincidence {
		snap.Coincidence = coincidenceOf(recs[maps])
	}
	return snap, nil
}
