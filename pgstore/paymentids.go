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

// PaymentIDStore is an [x402.PaymentIDStore] in the table
// vouch_x402_payment_ids, shared by every server on the database: a
// retry of a payment id on any of them gets the first response. Give it
// to x402.MiddlewareConfig.PaymentIDs alongside [DB.Replay] as Replay.
//
// Begin is one INSERT … ON CONFLICT statement on the id's primary key (an
// id whose until has passed is taken over by it): of concurrent Begins of
// one id, on any servers, exactly one reports true; the others read the
// row, and try again when it was released before they read it. Finish is
// one UPDATE of the row, Release one DELETE, each of the row only while
// it holds the until of the caller's Begin: a request that outlived its
// row, taken over since by a later Begin, changes nothing. (The until
// names the Begin: a takeover's until is later than the now it took the
// row at, which is not before the row's until.) Expired ids are removed by
// DeleteExpired (or [DB.Sweep]). The store is safe for concurrent use.
type PaymentIDStore struct {
	db *DB
}

var _ x402.PaymentIDStore = (*PaymentIDStore)(nil)

// PaymentIDs returns the payment id store of db.
func (db *DB) PaymentIDs() *PaymentIDStore { return &PaymentIDStore{db: db} }

// beginTries bounds the rounds of Begin: an id released between its two
// statements sends it round again.
const beginTries = 3

// Begin implements [x402.PaymentIDStore].
func (s *PaymentIDStore) Begin(ctx context.Context, id, request string, now, until time.Time) (x402.PaymentIDRecord, bool, error) {
	ctx, cancel, err := s.db.query(ctx)
	if err != nil {
		return x402.PaymentIDRecord{}, false, err
	}
	defer cancel()
	for range beginTries {
		tag, err := s.db.pool.Exec(ctx, `
			INSERT INTO vouch_x402_payment_ids AS p (id, request, until) VALUES ($1, $2, $3)
			ON CONFLICT (id) DO UPDATE SET request = EXCLUDED.request, record = NULL, until = EXCLUDED.until
			WHERE p.until <= $4`,
			textKey(id), request, until, now)
		if err != nil {
			return x402.PaymentIDRecord{}, false, fmt.Errorf("pgstore: beginning payment id: %w", err)
		}
		if tag.RowsAffected() == 1 {
			return x402.PaymentIDRecord{Request: request}, true, nil
		}
		var (
			first  string
			record []byte
		)
		err = s.db.pool.QueryRow(ctx, `SELECT request, record FROM vouch_x402_payment_ids WHERE id = $1`, textKey(id)).Scan(&first, &record)
		if errors.Is(err, pgx.ErrNoRows) {
			continue // released meanwhile: begin it in the next round
		}
		if err != nil {
			return x402.PaymentIDRecord{}, false, fmt.Errorf("pgstore: reading payment id: %w", err)
		}
		r := x402.PaymentIDRecord{Request: first}
		if record != nil {
			if err := json.Unmarshal(record, &r); err != nil {
				return x402.PaymentIDRecord{}, false, fmt.Errorf("pgstore: payment id %s: %w", id, err)
			}
			r.Done = true
		}
		return r, false, nil
	}
	// The id changes hands faster than it can be read; the middleware
	// answers 503 and the payer retries.
	return x402.PaymentIDRecord{}, false, fmt.Errorf("pgstore: payment id %s released while it was read, %d times", id, beginTries)
}

// Finish implements [x402.PaymentIDStore].
func (s *PaymentIDStore) Finish(ctx context.Context, id string, until, keep time.Time, r x402.PaymentIDRecord) error {
	r.Done = true
	record, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("pgstore: encoding a response by payment id: %w", err)
	}
	ctx, cancel, err := s.db.query(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	if _, err := s.db.pool.Exec(ctx, `UPDATE vouch_x402_payment_ids SET record = $3, until = $4 WHERE id = $1 AND until = $2`, textKey(id), until, record, keep); err != nil {
		return fmt.Errorf("pgstore: keeping a response by payment id: %w", err)
	}
	return nil
}

// Release implements [x402.PaymentIDStore].
func (s *PaymentIDStore) Release(ctx context.Context, id string, until time.Time) error {
	ctx, cancel, err := s.db.query(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	if _, err := s.db.pool.Exec(ctx, `DELETE FROM vouch_x402_payment_ids WHERE id = $1 AND until = $2 AND record IS NULL`, textKey(id), until); err != nil {
		return fmt.Errorf("pgstore: releasing payment id: %w", err)
	}
	return nil
}

// DeleteExpired removes the ids expired at now and returns how many it
// removed.
func (s *PaymentIDStore) DeleteExpired(ctx context.Context, now time.Time) (int, error) {
	return s.db.deleteExpired(ctx, now, "payment ids", "vouch_x402_payment_ids", "until <= $1")
}
