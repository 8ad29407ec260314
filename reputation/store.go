package reputation

import (
	"context"
	"slices"
	"sync"
)

// A Store keeps records. Implementations must be safe for concurrent use,
// and several Stores over one database (one per server) must behave as
// one: every Add is applied once, atomically, and seen by every later
// Load of any of them. Neither method may modify or keep the slice it is
// given after it returns: a Book reuses it.
type Store interface {
	// Load returns the records of keys, one per key in the same order; a
	// key nothing was ever added to reads the zero Record. It returns an
	// error wrapping ErrInvalid for a key out of range (see CheckKeys)
	// and ctx's error when ctx is done before it reads.
	Load(ctx context.Context, keys []Key) ([]Record, error)

	// Add applies every delta, in order, to its key's record as
	// Record.Add does with horizon: all of them or, on an error, none.
	// Deltas of one key within a batch apply one after the other. Add
	// must not read a record, compute and write it back unless no other
	// writer can change it in between (a row lock, a serializable
	// transaction). It returns an error wrapping ErrInvalid for a delta
	// or horizon out of range (see CheckDeltas), adding nothing, and
	// ctx's error when ctx is done before it writes.
	Add(ctx context.Context, horizon float64, deltas []Delta) error
}

// Memory is a [Store] in process memory. The zero Memory is empty and
// ready to use. It is safe for concurrent use, and must not be copied
// after first use.
type Memory struct {
	mu      sync.RWMutex
	records map[Key]*Record // a pointer, so that Add finds a record once
}

var _ Store = (*Memory)(nil)

// Load implements [Store].
func (m *Memory) Load(ctx context.Context, keys []Key) ([]Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	out := make([]Record, len(keys))
	missed := false
	m.mu.RLock()
	for i, k := range keys {
		if r := m.records[k]; r != nil {
			out[i] = *r
		} else {
			missed = true
		}
	}
	m.mu.RUnlock()
	// A key kept was checked as it was added: only a key not kept may be
	// out of range.
	if missed {
		if err := CheckKeys(keys); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// Add implements [Store].
func (m *Memory) Add(ctx context.Context, horizon float64, deltas []Delta) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := CheckDeltas(horizon, deltas); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	m.add(horizon, deltas)
	return nil
}

// add applies deltas; m.mu must be held.
func (m *Memory) add(horizon float64, deltas []Delta) {
	if m.records == nil {
		m.records = make(map[Key]*Record)
	}
	for _, d := range deltas {
		r := m.records[d.Key]
		if r == nil {
			r = new(Record)
			m.records[d.Key] = r
		}
		*r = r.Add(d.Delta, horizon)
	}
}

var _ SessionDeleter = (*Memory)(nil)

// DeleteSessions implements [SessionDeleter].
func (m *Memory) DeleteSessions(ctx context.Context, sessions []int64) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if err := CheckSessions(sessions); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	for k := range m.records {
		if slices.Contains(sessions, k.Session) {
			delete(m.records, k)
		}
	}
	return nil
}

var _ PanelDeleter = (*Memory)(nil)

// DeletePanel implements [PanelDeleter].
func (m *Memory) DeletePanel(ctx context.Context, operation, before string) (int, error) {
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := CheckPanelDelete(operation, before); err != nil {
		return 0, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for k := range m.records {
		if k.Session == PanelSession && k.Operation == operation && k.Kind < before {
			delete(m.records, k)
			n++
		}
	}
	return n, nil
}
