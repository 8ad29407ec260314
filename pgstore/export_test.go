package pgstore

import (
	"context"

	"github.com/vouchkit/vouch/receipt"
)

// PutUnlogged stores rec without appending it to the log, for the
// benchmark that measures what the log costs.
func (s *ReceiptStore) PutUnlogged(ctx context.Context, rec receipt.Record) error {
	return s.put(ctx, rec, false)
}

// SetSweepBatch sets the most rows one statement of DeleteExpired
// deletes, so that a test can sweep a backlog of several batches.
func (db *DB) SetSweepBatch(n int) { db.batch = n }
