package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vouchkit/vouch/x402"
	"github.com/vouchkit/vouch/x402/escrow"
)

// EscrowLedger is an [x402.EscrowLedger] in the table vouch_x402_escrow,
// shared by every server on the database: a payment held on one server
// is decided, captured, voided or refunded on any of them, and one that
// a server held and did not finish before it died is finished by another
// server, or by itself on restart ([escrow.Recovery]).
//
// Each step of a payment's lifecycle (Decide, Record) is one transaction
// that locks the payment's row (SELECT … FOR UPDATE), takes the step on
// the record as it stands and writes it back, so that of N servers
// recording one operation at once exactly one records it and the others
// get its outcome; Hold is one INSERT … ON CONFLICT DO NOTHING. A record
// is the payment as JSON. It is an [escrow.Claimer]: a claim is a
// conditional UPDATE of the payment's row, so of N servers recovering
// one payment at once exactly one claims it. The store is safe for
// concurrent use.
//
// A payment's row is kept until its refund deadline, when nothing can
// change it any more; DeleteExpired (or [DB.Sweep]) removes it then.
type EscrowLedger struct {
	// Now returns the current time, which stamps outcomes recorded
	// without one; nil means time.Now. Set it before first use.
	Now func() time.Time

	db *DB
}

var (
	_ x402.EscrowLedger = (*EscrowLedger)(nil)
	_ escrow.Claimer    = (*EscrowLedger)(nil)
)

// Escrow returns the escrow ledger of db.
func (db *DB) Escrow() *EscrowLedger { return &EscrowLedger{db: db} }

func (s *EscrowLedger) now() time.Time {
	if s.Now != nil {
		return s.Now()
	}
	return time.Now()
}

func decodeEscrow(id string, raw []byte) (x402.EscrowPayment, error) {
	var p x402.EscrowPayment
	if err := json.Unmarshal(raw, &p); err != nil {
		return x402.EscrowPayment{}, fmt.Errorf("pgstore: escrow payment %s: %w", id, err)
	}
	return p, nil
}

// Hold implements [x402.EscrowLedger].
func (s *EscrowLedger) Hold(ctx context.Context, p x402.EscrowPayment) (x402.EscrowPayment, bool, error) {
	ctx, cancel, err := s.db.query(ctx)
	if err != nil {
		return x402.EscrowPayment{}, false, err
	}
	defer cancel()
	if p, err = p.Held(); err != nil {
		return x402.EscrowPayment{}, false, err
	}
	raw, err := json.Marshal(p)
	if err != nil {
		return x402.EscrowPayment{}, false, err
	}
	var forget *time.Time
	if !p.RefundDeadline.IsZero() {
		forget = &p.RefundDeadline
	}
	tag, err := s.db.pool.Exec(ctx, `
		INSERT INTO vouch_x402_escrow (id, state, held_at, record, forget_at)
		VALUES ($1, $2, $3, $4, COALESCE($5, 'infinity'::timestamptz))
		ON CONFLICT (id) DO NOTHING`, p.ID, string(p.State), p.HeldAt, raw, forget)
	if err != nil {
		return x402.EscrowPayment{}, false, fmt.Errorf("pgstore: holding escrow payment: %w", err)
	}
	if tag.RowsAffected() == 1 {
		return p, true, nil
	}
	first, err := s.get(ctx, s.db.pool, p.ID, "")
	return first, false, err
}

// querier is what get needs of a pool or a transaction.
type querier interface {
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
}

// get reads the payment id, with lock appended to the query.
func (s *EscrowLedger) get(ctx context.Context, q querier, id, lock string) (x402.EscrowPayment, error) {
	var raw []byte
	err := q.QueryRow(ctx, `SELECT record FROM vouch_x402_escrow WHERE id = $1 `+lock, id).Scan(&raw)
	if errors.Is(err, pgx.ErrNoRows) {
		return x402.EscrowPayment{}, x402.ErrEscrowUnknown
	}
	if err != nil {
		return x402.EscrowPayment{}, fmt.Errorf("pgstore: reading escrow payment: %w", err)
	}
	return decodeEscrow(id, raw)
}

// step takes f on the payment id under its row lock and writes back
// what f returns when f reports a change.
func (s *EscrowLedger) step(ctx context.Context, id string, f func(x402.EscrowPayment) (x402.EscrowPayment, bool, error)) (x402.EscrowPayment, error) {
	ctx, cancel, err := s.db.query(ctx)
	if err != nil {
		return x402.EscrowPayment{}, err
	}
	defer cancel()
	var out x402.EscrowPayment
	err = pgx.BeginFunc(ctx, s.db.pool, func(tx pgx.Tx) error {
		p, err := s.get(ctx, tx, id, "FOR UPDATE")
		if err != nil {
			return err
		}
		next, changed, err := f(p)
		if err != nil {
			return err
		}
		out = next
		if !changed {
			return nil
		}
		raw, err := json.Marshal(next)
		if err != nil {
			return err
		}
		_, err = tx.Exec(ctx, `UPDATE vouch_x402_escrow SET state = $2, record = $3 WHERE id = $1`, id, string(next.State), raw)
		if err != nil {
			return fmt.Errorf("pgstore: writing escrow payment: %w", err)
		}
		return nil
	})
	return out, err
}

// Decide implements [x402.EscrowLedger].
func (s *EscrowLedger) Decide(ctx context.Context, id, verdict, capture string) (x402.EscrowPayment, error) {
	return s.step(ctx, id, func(p x402.EscrowPayment) (x402.EscrowPayment, bool, error) {
		return p.Decided(verdict, capture)
	})
}

// Record implements [x402.EscrowLedger].
func (s *EscrowLedger) Record(ctx context.Context, id string, o x402.EscrowOutcome) (x402.EscrowPayment, x402.EscrowOutcome, bool, error) {
	var (
		first x402.EscrowOutcome
		fresh bool
	)
	now := s.now()
	p, err := s.step(ctx, id, func(p x402.EscrowPayment) (x402.EscrowPayment, bool, error) {
		var err error
		p, first, fresh, err = p.Recorded(o, now)
		return p, fresh, err
	})
	if err != nil {
		return x402.EscrowPayment{}, x402.EscrowOutcome{}, false, err
	}
	return p, first, fresh, nil
}

// Get implements [x402.EscrowLedger].
func (s *EscrowLedger) Get(ctx context.Context, id string) (x402.EscrowPayment, error) {
	ctx, cancel, err := s.db.query(ctx)
	if err != nil {
		return x402.EscrowPayment{}, err
	}
	defer cancel()
	return s.get(ctx, s.db.pool, id, "")
}

// Unfinished implements [x402.EscrowLedger].
func (s *EscrowLedger) Unfinished(ctx context.Context, limit int) ([]x402.EscrowPayment, error) {
	ctx, cancel, err := s.db.query(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	var lim *int
	if limit > 0 {
		lim = &limit
	}
	rows, err := s.db.pool.Query(ctx, `
		SELECT id, record FROM vouch_x402_escrow WHERE state = 'held'
		ORDER BY held_at, id COLLATE "C" LIMIT $1`, lim)
	if err != nil {
		return nil, fmt.Errorf("pgstore: listing unfinished escrow payments: %w", err)
	}
	var (
		out []x402.EscrowPayment
		id  string
		raw []byte
	)
	_, err = pgx.ForEachRow(rows, []any{&id, &raw}, func() error {
		p, err := decodeEscrow(id, raw)
		out = append(out, p)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("pgstore: listing unfinished escrow payments: %w", err)
	}
	return out, nil
}

// Claim implements [escrow.Claimer].
func (s *EscrowLedger) Claim(ctx context.Context, id string, now, until time.Time) (bool, error) {
	ctx, cancel, err := s.db.query(ctx)
	if err != nil {
		return false, err
	}
	defer cancel()
	tag, err := s.db.pool.Exec(ctx, `
		UPDATE vouch_x402_escrow SET claimed_until = $3
		WHERE id = $1 AND state = 'held' AND (claimed_until IS NULL OR claimed_until <= $2)`, id, now, until)
	if err != nil {
		return false, fmt.Errorf("pgstore: claiming escrow payment: %w", err)
	}
	return tag.RowsAffected() == 1, nil
}

// DeleteExpired removes the payments whose refund deadline has passed at
// now, held or finished: none can be captured, voided or refunded any
// more (a hold past its capture deadline is its payer's to reclaim). It
// returns how many it removed.
func (s *EscrowLedger) DeleteExpired(ctx context.Context, now time.Time) (int, error) {
	return s.db.deleteExpired(ctx, now, "escrow payments", "vouch_x402_escrow", "forget_at <= $1")
}
