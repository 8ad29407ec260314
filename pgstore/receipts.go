package pgstore

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"golang.org/x/mod/sumdb/tlog"

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
//
// It keeps the transparency log of its receipts ([receipt.LogReader]) in
// the tables vouch_receipt_log and vouch_receipt_log_head: Put inserts
// the receipt and appends it to the log in one transaction, which locks
// the head row, so the Puts of every server on the database form one
// log, and a receipt is committed if and only if it is in the log.
type ReceiptStore struct {
	db *DB
}

var (
	_ receipt.Store     = (*ReceiptStore)(nil)
	_ receipt.LogReader = (*ReceiptStore)(nil)
)

// Receipts returns the receipt store of db.
func (db *DB) Receipts() *ReceiptStore { return &ReceiptStore{db: db} }

// Put implements [receipt.Store]. The id is claimed by the primary key:
// of two concurrent Puts of one id, on any servers, one gets
// receipt.ErrDuplicate. It is one statement, vouch_receipt_append (see
// the migration 00004_receipt_log.sql), which locks the log's head row,
// inserts the receipt, and writes the leaf's stored hashes and the new
// size: one round trip and one transaction.
func (s *ReceiptStore) Put(ctx context.Context, rec receipt.Record) error {
	return s.put(ctx, rec, true)
}

// put stores rec, appended to the log when logged is set (the benchmarks
// compare the two).
func (s *ReceiptStore) put(ctx context.Context, rec receipt.Record, logged bool) error {
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
	if !logged {
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
	var n int64
	err = s.db.pool.QueryRow(ctx, `SELECT vouch_receipt_append($1, $2, $3, $4, $5, $6)`,
		rec.ID, rec.Data, rec.Owner, string(rec.Visibility), parties, rec.ExpiresAt).Scan(&n)
	if err != nil {
		return fmt.Errorf("pgstore: storing receipt %s: %w", rec.ID, err)
	}
	if n < 0 {
		return fmt.Errorf("%w: %s", receipt.ErrDuplicate, rec.ID)
	}
	return nil
}

// readHashes reads the stored hashes at indexes, in order.
func readHashes(ctx context.Context, q *pgxpool.Pool, indexes []int64) ([]tlog.Hash, error) {
	if len(indexes) == 0 {
		return nil, nil
	}
	rows, err := q.Query(ctx, `SELECT idx, hash FROM vouch_receipt_log WHERE idx = ANY($1)`, indexes)
	if err != nil {
		return nil, err
	}
	found := make(map[int64]tlog.Hash, len(indexes))
	var x int64
	var h []byte
	_, err = pgx.ForEachRow(rows, []any{&x, &h}, func() error {
		if len(h) != tlog.HashSize {
			return fmt.Errorf("pgstore: stored hash %d is %d bytes", x, len(h))
		}
		found[x] = tlog.Hash(h)
		return nil
	})
	if err != nil {
		return nil, err
	}
	out := make([]tlog.Hash, len(indexes))
	for i, x := range indexes {
		var ok bool
		if out[i], ok = found[x]; !ok {
			return nil, fmt.Errorf("pgstore: stored hash %d is missing from the log", x)
		}
	}
	return out, nil
}

// LogSize implements [receipt.LogReader].
func (s *ReceiptStore) LogSize(ctx context.Context) (int64, error) {
	ctx, cancel, err := s.db.query(ctx)
	if err != nil {
		return 0, err
	}
	defer cancel()
	var n int64
	if err := s.db.pool.QueryRow(ctx, `SELECT size FROM vouch_receipt_log_head`).Scan(&n); err != nil {
		return 0, fmt.Errorf("pgstore: reading the log size: %w", err)
	}
	return n, nil
}

// ReadLogHashes implements [receipt.LogReader].
func (s *ReceiptStore) ReadLogHashes(ctx context.Context, indexes []int64) ([]tlog.Hash, error) {
	ctx, cancel, err := s.db.query(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	hashes, err := readHashes(ctx, s.db.pool, indexes)
	if err != nil {
		return nil, fmt.Errorf("pgstore: reading the log: %w", err)
	}
	return hashes, nil
}

// Get implements [receipt.Store]. An id that is not valid UTF-8 or holds
// a NUL, which no stored record has (receipt.Record.Validate refuses it)
// and PostgreSQL's text cannot carry, is receipt.ErrNotFound, as in every
// other store.
func (s *ReceiptStore) Get(ctx context.Context, id string, now time.Time) (receipt.Record, error) {
	ctx, cancel, err := s.db.query(ctx)
	if err != nil {
		return receipt.Record{}, err
	}
	defer cancel()
	if !utf8.ValidString(id) || strings.ContainsRune(id, 0) {
		return receipt.Record{}, receipt.ErrNotFound
	}
	rec := receipt.Record{ID: id}
	var vis string
	var logIndex *int64
	err = s.db.pool.QueryRow(ctx, `
		SELECT data, owner, visibility, counterparties, expires_at, log_index
		FROM vouch_receipts WHERE id = $1 AND expires_at > $2`, id, now).
		Scan(&rec.Data, &rec.Owner, &vis, &rec.Counterparties, &rec.ExpiresAt, &logIndex)
	if errors.Is(err, pgx.ErrNoRows) {
		return receipt.Record{}, receipt.ErrNotFound
	}
	if err != nil {
		return receipt.Record{}, fmt.Errorf("pgstore: reading receipt %s: %w", id, err)
	}
	rec.Visibility = receipt.Visibility(vis)
	rec.ExpiresAt = rec.ExpiresAt.UTC()
	rec.LogIndex = -1
	if logIndex != nil {
		rec.LogIndex = *logIndex
	}
	return rec, nil
}

// DeleteExpired implements [receipt.Store].
func (s *ReceiptStore) DeleteExpired(ctx context.Context, now time.Time) (int, error) {
	return s.db.deleteExpired(ctx, now, "receipts", "vouch_receipts", "expires_at <= $1")
}
