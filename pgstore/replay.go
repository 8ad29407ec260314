package pgstore

import (
	"context"
	"fmt"
	"time"

	"github.com/vouchkit/vouch/x402"
)

// ReplayStore is an [x402.ReplayStore] in the table vouch_x402_replay,
// shared by every server on the database, so that a payment authorization
// is accepted at most once across all of them.
//
// Reserve is one INSERT … ON CONFLICT statement on the key's primary key,
// never a read followed by a write: of two concurrent Reserves of one key,
// on any servers, exactly one reports true. A key whose time has passed
// is taken over by the same statement. Expired keys are removed by
// DeleteExpired (or [DB.Sweep]). The store is safe for concurrent use.
type ReplayStore struct {
	db *DB
}

var _ x402.ReplayStore = (*ReplayStore)(nil)

// Replay returns the payment replay store of db.
func (db *DB) Replay() *ReplayStore { return &ReplayStore{db: db} }

// Reserve implements [x402.ReplayStore].
func (s *ReplayStore) Reserve(ctx context.Context, key string, now, until time.Time) (bool, error) {
	ctx, cancel, err := s.db.query(ctx)
	if err != nil {
		return false, err
	}
	defer cancel()
	tag, err := s.db.pool.Exec(ctx, `
		INSERT INTO vouch_x402_replay AS r (key, until) VALUES ($1, $2)
		ON CONFLICT (key) DO UPDATE SET until = EXCLUDED.until WHERE r.until <= $3`,
		key, until, now)
	if err != nil {
		return false, fmt.Errorf("pgstore: reserving payment authorization: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// Release implements [x402.ReplayStore].
func (s *ReplayStore) Release(ctx context.Context, key string) error {
	ctx, cancel, err := s.db.query(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	if _, err := s.db.pool.Exec(ctx, `DELETE FROM vouch_x402_replay WHERE key = $1`, key); err != nil {
		return fmt.Errorf("pgstore: releasing payment authorization: %w", err)
	}
	return nil
}

// DeleteExpired removes the keys expired at now and returns how many it
// removed.
func (s *ReplayStore) DeleteExpired(ctx context.Context, now time.Time) (int, error) {
	ctx, cancel, err := s.db.query(ctx)
	if err != nil {
		return 0, err
	}
	defer cancel()
	tag, err := s.db.pool.Exec(ctx, `DELETE FROM vouch_x402_replay WHERE until <= $1`, now)
	if err != nil {
		return 0, fmt.Errorf("pgstore: deleting expired payment authorizations: %w", err)
	}
	return int(tag.RowsAffected()), nil
}
