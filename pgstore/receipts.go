package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
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
// receipt.ErrDuplicate. It takes three round trips in one transaction:
// insert the receipt while locking the log's head row, read the stored
// hashes the new leaf combines with (none for an even leaf index), and
// write the new hashes, the head and COMMIT.
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
	conn, err := s.db.pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("pgstore: storing receipt %s: %w", rec.ID, err)
	}
	defer conn.Release()
	err = appendReceipt(ctx, conn.Conn(), rec, parties)
	if err != nil {
		// Leave no transaction open on a connection going back to the
		// pool; one that cannot roll back is closed, and the pool drops it.
		if _, rerr := conn.Exec(context.WithoutCancel(ctx), "ROLLBACK"); rerr != nil {
			conn.Conn().Close(context.WithoutCancel(ctx))
		}
		if errors.Is(err, receipt.ErrDuplicate) {
			return err
		}
		return fmt.Errorf("pgstore: storing receipt %s: %w", rec.ID, err)
	}
	return nil
}

// appendReceipt runs the transaction of a logged Put on conn, from BEGIN
// to COMMIT; on an error the caller rolls back.
func appendReceipt(ctx context.Context, conn *pgx.Conn, rec receipt.Record, parties []string) error {
	b := &pgx.Batch{}
	b.Queue("BEGIN")
	b.Queue(`
		INSERT INTO vouch_receipts (id, data, owner, visibility, counterparties, expires_at, log_index)
		SELECT $1, $2, $3, $4, $5, $6, size FROM vouch_receipt_log_head FOR UPDATE
		ON CONFLICT (id) DO NOTHING
		RETURNING log_index`,
		rec.ID, rec.Data, rec.Owner, string(rec.Visibility), parties, rec.ExpiresAt)
	br := conn.SendBatch(ctx, b)
	_, err := br.Exec()
	var n int64
	if err == nil {
		err = br.QueryRow().Scan(&n)
		if errors.Is(err, pgx.ErrNoRows) {
			err = fmt.Errorf("%w: %s", receipt.ErrDuplicate, rec.ID)
		}
	}
	if cerr := br.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return err
	}
	first, hashes, err := receipt.LogAppend(n, rec.Data, func(indexes []int64) ([]tlog.Hash, error) {
		return readHashes(ctx, conn, indexes)
	})
	if err != nil {
		return err
	}
	idx := make([]int64, len(hashes))
	vals := make([][]byte, len(hashes))
	for i := range hashes {
		idx[i], vals[i] = first+int64(i), hashes[i][:]
	}
	b = &pgx.Batch{}
	b.Queue(`INSERT INTO vouch_receipt_log (idx, hash) SELECT * FROM unnest($1::bigint[], $2::bytea[])`, idx, vals)
	b.Queue(`UPDATE vouch_receipt_log_head SET size = $1`, n+1)
	b.Queue("COMMIT")
	return conn.SendBatch(ctx, b).Close()
}

// querier is a pool or a connection.
type querier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// readHashes reads the stored hashes at indexes, in order.
func readHashes(ctx context.Context, q querier, indexes []int64) ([]tlog.Hash, error) {
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

// Get implements [receipt.Store].
func (s *ReceiptStore) Get(ctx context.Context, id string, now time.Time) (receipt.Record, error) {
	ctx, cancel, err := s.db.query(ctx)
	if err != nil {
		return receipt.Record{}, err
	}
	defer cancel()
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
