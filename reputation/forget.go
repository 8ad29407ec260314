package reputation

import "context"

// Forget withdraws what b has learned of sessions in scope, as though
// they had never voted there: their records at every level of scope
// (the session's overall record among them, which every scope of the
// session reads from), their record against the other votes (Lead) and
// their confidence slopes. The next read of such a session is the
// Prior's, and it can lead only once new reports qualify it again.
//
// A host calls it when a session's worker has changed, a new model
// behind the same session: records forget by evidence alone (see the
// package doc), and a session that led on a few dozen reports keeps
// its lead until new reports outweigh them, which at 5% of outcomes can
// take longer than the host's calls (docs/ACCURACY.md, A panel that
// changes). Records of other scopes narrower than the session's overall
// one are left; calibration maps and the panel's records, which no one
// session owns, are left too. [Book.Identify] forgets a session whose
// worker changed in every scope.
//
// Forget is one Store.Add of deltas that take every count to zero (a
// count never falls below zero), so it needs no read and applies
// atomically with the reports of other servers sharing the store. A
// session that is not positive is refused with an error wrapping
// ErrInvalid: 0 names the panel's records (PanelSession).
func (b *Book) Forget(ctx context.Context, scope Scope, sessions ...int64) error {
	if err := scope.check(); err != nil {
		return err
	}
	if err := CheckSessions(sessions); err != nil {
		return err
	}
	var keys []Key
	for _, s := range sessions {
		keys = scope.appendKeys(keys, s)
		keys = append(keys, leadKey(scope, s))
		keys = slopeKeys(keys, scope, s)
	}
	if len(keys) == 0 {
		return nil
	}
	deltas := make([]Delta, len(keys))
	for i, k := range keys {
		deltas[i] = Delta{Key: k, Delta: Record{Right: -MaxCount, Wrong: -MaxCount}}
	}
	return b.store.Add(ctx, b.opts.Horizon, deltas)
}
