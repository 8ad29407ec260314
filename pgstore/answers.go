package pgstore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// AnswerStore keeps, in the table vouch_mcp_answers, the tool results
// that settled MCP payments bought, shared by every server on the
// database: it is a trustmcp.AnswerStore, so that a paid result lost on
// the way is delivered again to a retry of the same call with the same
// payment on any server. Give it to trustmcp.PaywallConfig.Answers
// alongside [DB.Replay] as Replay. pgstore does not import trustmcp (that
// would link the MCP SDK into every program that uses pgstore); the type
// has the interface's methods.
//
// Keep is one INSERT … ON CONFLICT DO NOTHING: of two Keeps of one key,
// the first answer stays. The first answer kept is the one the payment
// settled for, and a retry must get that answer, never a later one. A
// key is a payment authorization, which cannot be settled again after
// its until (its validBefore), so a key is never kept twice for two
// settlements. Answer is one SELECT of the key's row. Expired answers are
// removed by DeleteExpired (or [DB.Sweep]). The store is safe for
// concurrent use.
type AnswerStore struct {
	db *DB
}

// Answers returns the MCP answer store of db.
func (db *DB) Answers() *AnswerStore { return &AnswerStore{db: db} }

// Keep records answer, the JSON of a tool result, under key until the
// time until, unless an answer is already kept under key. It implements
// trustmcp.AnswerStore. The table is bounded by time (DeleteExpired), not
// by count, so no payer's answers push out another's and payer is not
// recorded: the replay store's settlement names it.
func (s *AnswerStore) Keep(ctx context.Context, key, _ string, answer []byte, until time.Time) error {
	ctx, cancel, err := s.db.query(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	if _, err := s.db.pool.Exec(ctx, `
		INSERT INTO vouch_mcp_answers (key, answer, until) VALUES ($1, $2, $3)
		ON CONFLICT (key) DO NOTHING`,
		textKey(key), answer, until); err != nil {
		return fmt.Errorf("pgstore: keeping a paid answer: %w", err)
	}
	return nil
}

// Answer returns the answer kept under key, and false when none is kept
// or it has expired at now. It implements trustmcp.AnswerStore.
func (s *AnswerStore) Answer(ctx context.Context, key string, now time.Time) ([]byte, bool, error) {
	ctx, cancel, err := s.db.query(ctx)
	if err != nil {
		return nil, false, err
	}
	defer cancel()
	var answer []byte
	err = s.db.pool.QueryRow(ctx, `SELECT answer FROM vouch_mcp_answers WHERE key = $1 AND until > $2`,
		textKey(key), now).Scan(&answer)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("pgstore: looking up a paid answer: %w", err)
	}
	return answer, true, nil
}

// DeleteExpired removes the answers expired at now and returns how many
// it removed.
func (s *AnswerStore) DeleteExpired(ctx context.Context, now time.Time) (int, error) {
	return s.db.deleteExpired(ctx, now, "paid answers", "vouch_mcp_answers", "until <= $1")
}
