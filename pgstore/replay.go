package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vouchkit/vouch/x402"
)

// ReplayStore is an [x402.ReplayStore] in the table vouch_x402_replay,
// shared by every server on the database, so that a payment authorization
// is accepted at most once across all of them.
//
// Reserve is one INSERT … ON CONFLICT statement on the key's primary key,
// never a read followed by a write: of two concurrent Reserves of one key,
// on any servers, exactly one reports true. A key whose time has passed
// is taken over by the same statement, which also forgets its settlement.
// Release is one DELETE of the row while it holds the until of the
// caller's Reserve, so that a request that outlived its reservation
// never frees the key of the one that took it over. MarkSettled is one UPDATE of the key's row and LookupSettled one SELECT
// of it; neither decides whether a payment is accepted. Expired keys are
// removed by DeleteExpired (or [DB.Sweep]). The store is safe for
// concurrent use.
//
// Under disconnects and retries: the x402 middleware calls MarkSettled on
// a context detached from the client's, so a settlement is recorded even
// when the client that paid has gone; a retry on any server then finds it
// with LookupSettled and gets the kept answer. A key outlives its server:
// a server that dies after Reserve leaves the authorization used until
// its validBefore, and the payer signs a new one.
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
		ON CONFLICT (key) DO UPDATE SET until = EXCLUDED.until, request = NULL, settlement = NULL
		WHERE r.until <= $3`,
		textKey(key), until, now)
	if err != nil {
		return false, fmt.Errorf("pgstore: reserving payment authorization: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// Release implements [x402.ReplayStore].
func (s *ReplayStore) Release(ctx context.Context, key string, until time.Time) error {
	ctx, cancel, err := s.db.query(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	if _, err := s.db.pool.Exec(ctx, `DELETE FROM vouch_x402_replay WHERE key = $1 AND until = $2`, textKey(key), until); err != nil {
		return fmt.Errorf("pgstore: releasing payment authorization: %w", err)
	}
	return nil
}

// MarkSettled implements [x402.ReplayStore].
func (s *ReplayStore) MarkSettled(ctx context.Context, key string, sp x402.SettledPayment) error {
	settlement, err := json.Marshal(sp.Settlement)
	if err != nil {
		return fmt.Errorf("pgstore: encoding the settlement: %w", err)
	}
	ctx, cancel, err := s.db.query(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	if _, err := s.db.pool.Exec(ctx, `UPDATE vouch_x402_replay SET request = $2, settlement = $3 WHERE key = $1`,
		textKey(key), sp.Request, settlement); err != nil {
		return fmt.Errorf("pgstore: recording a settled payment: %w", err)
	}
	return nil
}

// LookupSettled implements [x402.ReplayStore].
func (s *ReplayStore) LookupSettled(ctx context.Context, key string, now time.Time) (x402.SettledPayment, bool, error) {
	ctx, cancel, err := s.db.query(ctx)
	if err != nil {
		return x402.SettledPayment{}, false, err
	}
	defer cancel()
	var sp x402.SettledPayment
	var settlement []byte
	err = s.db.pool.QueryRow(ctx, `
		SELECT request, settlement FROM vouch_x402_replay
		WHERE key = $1 AND until > $2 AND request IS NOT NULL AND settlement IS NOT NULL`,
		textKey(key), now).Scan(&sp.Request, &settlement)
	if errors.Is(err, pgx.ErrNoRows) {
		return x402.SettledPayment{}, false, nil
	}
	if err != nil {
		return x402.SettledPayment{}, false, fmt.Errorf("pgstore: looking up a settled payment: %w", err)
	}
	if err := json.Unmarshal(settlement, &sp.Settlement); err != nil {
		return x402.SettledPayment{}, false, fmt.Errorf("pgstore: decoding a settled payment: %w", err)
	}
	return sp, true, nil
}

// DeleteExpired removes the keys expired at now and returns how many it
// removed.
func (s *ReplayStore) DeleteExpired(ctx context.Context, now time.Time) (int, error) {
	return s.db.deleteExpired(ctx, now, "payment authorizations", "vouch_x402_replay", "until <= $1")
}
