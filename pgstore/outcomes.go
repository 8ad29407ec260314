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

// OutcomeStore is an [x402.OutcomeStore] in the table
// vouch_x402_outcomes, shared by every server on the database: the
// outcome of a proof spent on a gated or "auth-capture" route (the answer
// delivered with its settlement, the refusal, the answer kept while its
// settlement is sent, or the answer held back for a pending capture) is
// found by the proof's retry on any server,
// and after a restart. Give it to x402.MiddlewareConfig.Outcomes
// alongside [DB.Replay] as Replay and [DB.Escrow] as the escrow's
// Ledger: with those durable and the outcomes in memory, the retry of a
// pending capture that reaches another server, or the same one
// restarted, finds no outcome and is answered 402 "already used", while
// package x402/escrow's Recovery captures the payment by its recorded
// verdict.
//
// Keep is one INSERT … ON CONFLICT DO UPDATE on the key's primary key:
// the last outcome kept under a key replaces the one before (a pending
// capture becomes the delivered answer), its until included. Lookup is
// one SELECT of the key's row. The table is bounded by time, not by
// count: an outcome is kept until the time Keep is given, however long,
// and Middleware gives at most its MaxValidity from now; expired
// outcomes are removed by DeleteExpired (or [DB.Sweep]). The store is
// safe for concurrent use.
type OutcomeStore struct {
	db *DB
}

var _ x402.OutcomeStore = (*OutcomeStore)(nil)

// Outcomes returns the outcome store of db.
func (db *DB) Outcomes() *OutcomeStore { return &OutcomeStore{db: db} }

// Keep implements [x402.OutcomeStore].
func (s *OutcomeStore) Keep(ctx context.Context, key string, o x402.Outcome, until time.Time) error {
	ctx, cancel, err := s.db.query(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	outcome, err := json.Marshal(o)
	if err != nil {
		return fmt.Errorf("pgstore: encoding an outcome: %w", err)
	}
	if _, err := s.db.pool.Exec(ctx, `
		INSERT INTO vouch_x402_outcomes (key, outcome, until) VALUES ($1, $2, $3)
		ON CONFLICT (key) DO UPDATE SET outcome = EXCLUDED.outcome, until = EXCLUDED.until`,
		textKey(key), outcome, until); err != nil {
		return fmt.Errorf("pgstore: keeping an outcome: %w", err)
	}
	return nil
}

// Lookup implements [x402.OutcomeStore].
func (s *OutcomeStore) Lookup(ctx context.Context, key string, now time.Time) (x402.Outcome, bool, error) {
	ctx, cancel, err := s.db.query(ctx)
	if err != nil {
		return x402.Outcome{}, false, err
	}
	defer cancel()
	var outcome []byte
	err = s.db.pool.QueryRow(ctx, `SELECT outcome FROM vouch_x402_outcomes WHERE key = $1 AND until > $2`,
		textKey(key), now).Scan(&outcome)
	if errors.Is(err, pgx.ErrNoRows) {
		return x402.Outcome{}, false, nil
	}
	if err != nil {
		return x402.Outcome{}, false, fmt.Errorf("pgstore: looking up an outcome: %w", err)
	}
	var o x402.Outcome
	if err := json.Unmarshal(outcome, &o); err != nil {
		return x402.Outcome{}, false, fmt.Errorf("pgstore: decoding an outcome: %w", err)
	}
	return o, true, nil
}

// DeleteExpired removes the outcomes expired at now and returns how many
// it removed.
func (s *OutcomeStore) DeleteExpired(ctx context.Context, now time.Time) (int, error) {
	return s.db.deleteExpired(ctx, now, "outcomes", "vouch_x402_outcomes", "until <= $1")
}
