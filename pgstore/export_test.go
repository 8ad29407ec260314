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
