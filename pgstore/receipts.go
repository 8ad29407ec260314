package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vouchkit/vouch/receipt"
)

// ReceiptStore is a [receipt.Store] in the table vouch_receipts. The
// receipt's bytes are kept in a bytea column and returned unchanged, so
// its signature still verifies; owner, visibility, counterparties and
// expiry are columns beside them. Get answers as receipt.MemStore does: a
// record is live while now is before its expiry, kept to the microsecond.
// A Put that returned nil is committed (durable as PostgreSQL is
// configured to be). It is safe for concurrent use by any number of
// processes.
type ReceiptStore struct {
	db *DB
}

var _ receipt.Store = (*ReceiptStore)(nil)

// Receipts returns the receipt store of db.
func (db *DB) Receipts() *ReceiptStore { return &ReceiptStore{db: db} }

// Put implements [receipt.Store]. The id is claimed by the primary key:
// of two concurrent Puts of one id, on any servers, one gets
// receipt.ErrDuplicate.
func (s *ReceiptStore) Put(ctx context.Context, rec receipt.Record) error {
	if err := rec.Validate(); err != nil {
		return err
	}
	ctx, cancel, err := s.db.query(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	parties := rec.Counterparties
	if parties == nil {
		parties = []string{} // the column is NOT NULL
	}
	tag, err := s.db.pool.Exec(ctx, `
		INSERT INTO vouch_receipts (id, data, owner, visibility, counterparties, expires_at)
		VALUES ($1, $2, $3, $4, $5, $6)
		ON CONFLICT (id) DO NOTHING`,
		rec.ID, rec.Data, rec.Owner, string(rec.Visibility), parties, rec.ExpiresAt)
	if err != nil {
		return fmt.Errorf("pgstore: storing receipt %s: %w", rec.ID, err)
	}
	if tag.RowsAffected() == 0 {
		return fmt.Errorf("%w: %s", receipt.ErrDuplicate, rec.ID)
	}
	return nil
}

// Get implements [receipt.Store].
func (s *ReceiptStore) Get(ctx context.Context, id string, now time.Time) (receipt.Record, error) {
	ctx, cancel, err := s.db.query(ctx)
	if err != nil {
		return receipt.Record{}, err
	}
	defer cancel()
	rec := receipt.Record{ID: id}
	var vis string
	err = s.db.pool.QueryRow(ctx, `
		SELECT data, owner, visibility, counterparties, expires_at
		FROM vouch_receipts WHERE id = $1 AND expires_at > $2`, id, now).
		Scan(&rec.Data, &rec.Owner, &vis, &rec.Counterparties, &rec.ExpiresAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return receipt.Record{}, receipt.ErrNotFound
	}
	if err != nil {
		return receipt.Record{}, fmt.Errorf("pgstore: reading receipt %s: %w", id, err)
	}
	rec.Visibility = receipt.Visibility(vis)
	rec.ExpiresAt = rec.ExpiresAt.UTC()
	return rec, nil
}

// DeleteExpired implements [receipt.Store].
func (s *ReceiptStore) DeleteExpired(ctx context.Context, now time.Time) (int, error) {
	ctx, cancel, err := s.db.query(ctx)
	if err != nil {
		return 0, err
	}
	defer cancel()
	tag, err := s.db.pool.Exec(ctx, `DELETE FROM vouch_receipts WHERE expires_at <= $1`, now)
	if err != nil {
		return 0, fmt.Errorf("pgstore: deleting expired receipts: %w", err)
	}
	return int(tag.RowsAffected()), nil
}
