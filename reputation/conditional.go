package reputation

import (
	"context"
	"fmt"
)

// A ConditionalStore is a [Store] that can apply deltas only while one
// record reads what the caller last read of it, atomically: what a
// [Ledger] needs so that a report on a call counts once on every server
// sharing the store, when two servers take reports on the same call at
// once or one of them read the call's report before another replaced it.
// [Memory], boltstore.Store and pgstore's ReputationStore are
// ConditionalStores. With a Store that is not one, a Ledger reads and then
// adds, and only the reports it takes itself are kept apart.
type ConditionalStore interface {
	Store
	// AddIf applies deltas as Add does, all of them or none, provided the
	// record of cond reads want (the zero Record when nothing was ever
	// added to it) when they are applied, and reports whether it applied
	// them; when the record reads otherwise it adds nothing and reports
	// false. The check and the deltas are one atomic step: no Add of any
	// server sharing the store lands between them. It returns an error
	// wrapping ErrInvalid for cond, a delta or horizon out of range,
	// adding nothing, and ctx's error when ctx is done before it writes.
	AddIf(ctx context.Context, horizon float64, cond Key, want Record, deltas []Delta) (bool, error)
}

var _ ConditionalStore = (*Memory)(nil)

// AddIf implements [ConditionalStore].
func (m *Memory) AddIf(ctx context.Context, horizon float64, cond Key, want Record, deltas []Delta) (bool, error) {
	if err := ctx.Err(); err != nil {
		return false, err
	}
	if err := CheckCondition(horizon, cond, deltas); err != nil {
		return false, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	var got Record
	if r := m.records[cond]; r != nil {
		got = *r
	}
	if got != want {
		return false, nil
	}
	m.add(horizon, deltas)
	return true, nil
}

// CheckCondition reports what a ConditionalStore's AddIf refuses: a
// condition key out of range, or a delta or horizon CheckDeltas refuses,
// as an error wrapping ErrInvalid.
func CheckCondition(horizon float64, cond Key, deltas []Delta) error {
	if err := cond.check(); err != nil {
		return fmt.Errorf("cond: %w", err)
	}
	return CheckDeltas(horizon, deltas)
}
