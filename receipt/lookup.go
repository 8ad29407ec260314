package receipt

import (
	"context"
	"errors"
	"slices"
	"time"
)

// Fetch returns the record with id from s if caller may see it at now:
// the receipt is live (now is before its expiry) and caller is its owner,
// or the receipt is shared and caller is one of the counterparties named
// when it was issued. A public receipt is treated as shared while public
// is a future mode.
//
// Every refusal (unknown id, expired, not visible to caller, empty
// caller) is the same error wrapping [ErrNotFound], so that a caller
// cannot learn whether a receipt it may not see exists. Other errors are
// the store's.
func Fetch(ctx context.Context, s Store, id, caller string, now time.Time) (Record, error) {
	if caller == "" || !ValidID(id) {
		return Record{}, ErrNotFound
	}
	rec, err := s.Get(ctx, id, now)
	if errors.Is(err, ErrNotFound) {
		return Record{}, ErrNotFound
	}
	if err != nil {
		return Record{}, err
	}
	if !visible(&rec, caller) {
		return Record{}, ErrNotFound
	}
	return rec, nil
}

// visible reports whether caller may see rec.
func visible(rec *Record, caller string) bool {
	if caller == rec.Owner {
		return true
	}
	switch rec.Visibility {
	case VisibilityShared, VisibilityPublic:
		return slices.Contains(rec.Counterparties, caller)
	}
	return false
}
