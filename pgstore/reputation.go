package pgstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/vouchkit/vouch/reputation"
)

// ReputationStore keeps session reliability (package reputation) in the
// table vouch_reputation, shared by every server on the database: it is a
// reputation.Store, so engines behind one load balancer learn together,
// and a restart keeps what they learned.
//
// Add runs in one transaction that locks the rows of its keys, in one
// order (session, operation, kind) so that two Adds never deadlock, then
// applies the deltas in Go with reputation.Record.Add, exactly as the
// in-memory store does, and writes the results: a row is never changed
// between its read and its write, and the arithmetic is the same float64
// arithmetic on every store. When DeletePanel deletes a row while Add
// waits for its lock, Add rolls back and runs again in a new
// transaction, which lands wholly after the deletion. AddIf
// (reputation.ConditionalStore) is Add with one more row locked and read
// before anything is written; a row made only to lock that one is
// deleted before the transaction commits. An Add that PostgreSQL fails
// as deadlocked with DeleteSessions runs again, as does DeleteSessions.
// Load is one SELECT. The store is safe for concurrent use.
type ReputationStore struct {
	db *DB
}

var _ reputation.Store = (*ReputationStore)(nil)

// Reputation returns the reputation store of db.
func (db *DB) Reputation() *ReputationStore { return &ReputationStore{db: db} }

// Load implements reputation.Store.
func (s *ReputationStore) Load(ctx context.Context, keys []reputation.Key) ([]reputation.Record, error) {
	if err := reputation.CheckKeys(keys); err != nil {
		return nil, err
	}
	ctx, cancel, err := s.db.query(ctx)
	if err != nil {
		return nil, err
	}
	defer cancel()
	sessions, ops, kinds := columns(keys)
	rows, err := s.db.pool.Query(ctx, `
		SELECT session, operation, kind, right_n, wrong_n FROM vouch_reputation
		WHERE (session, operation, kind) IN (SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[]))`,
		sessions, ops, kinds)
	if err != nil {
		return nil, fmt.Errorf("pgstore: loading reputation: %w", err)
	}
	found, err := scanRecords(rows)
	if err != nil {
		return nil, fmt.Errorf("pgstore: loading reputation: %w", err)
	}
	out := make([]reputation.Record, len(keys))
	for i, k := range keys {
		out[i] = found[k]
	}
	return out, nil
}

// Add implements reputation.Store.
func (s *ReputationStore) Add(ctx context.Context, horizon float64, deltas []reputation.Delta) error {
	if err := reputation.CheckDeltas(horizon, deltas); err != nil {
		return err
	}
	if len(deltas) == 0 {
		return ctx.Err()
	}
	_, err := s.add(ctx, horizon, deltas, nil, reputation.Record{})
	return err
}

var _ reputation.ConditionalStore = (*ReputationStore)(nil)

// AddIf implements reputation.ConditionalStore. It is Add with cond's row
// locked among the others: the deltas are applied, in the same
// transaction, only if that row reads want under its lock.
func (s *ReputationStore) AddIf(ctx context.Context, horizon float64, cond reputation.Key, want reputation.Record, deltas []reputation.Delta) (bool, error) {
	if err := reputation.CheckCondition(horizon, cond, deltas); err != nil {
		return false, err
	}
	return s.add(ctx, horizon, deltas, &cond, want)
}

// errUnmet rolls back an AddIf whose condition does not hold.
var errUnmet = errors.New("pgstore: condition not met")

// add applies deltas in one transaction that locks the rows of their
// keys (and of cond, when not nil), and reports whether it applied them:
// false when cond's row does not read want.
func (s *ReputationStore) add(ctx context.Context, horizon float64, deltas []reputation.Delta, cond *reputation.Key, want reputation.Record) (bool, error) {
	ctx, cancel, err := s.db.query(ctx)
	if err != nil {
		return false, err
	}
	defer cancel()
	keys := make([]reputation.Key, 0, len(deltas)+1)
	for _, d := range deltas {
		keys = append(keys, d.Key)
	}
	if cond != nil {
		keys = append(keys, *cond)
	}
	slices.SortFunc(keys, compareKeys)
	keys = slices.Compact(keys)
	for range addTries {
		err = s.addOnce(ctx, horizon, deltas, cond, want, keys)
		if !errors.Is(err, errRowGone) && !deadlocked(err) {
			break
		}
	}
	if errors.Is(err, errUnmet) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("pgstore: adding reputation evidence: %w", err)
	}
	return true, nil
}

// addTries bounds the transactions of one add: a row deleted between its
// INSERT and its lock (by DeletePanel), or a deadlock with DeleteSessions
// that PostgreSQL broke by failing the add, sends it round again.
const addTries = 5

// deadlocked reports whether err is PostgreSQL's deadlock_detected, which
// rolled back the transaction it failed. Adds lock their rows in one
// order and never deadlock with each other, but DeleteSessions locks the
// sessions' rows it finds and then updates them with any row of theirs
// that was written in between, out of that order: an Add holding such a
// row while it waits for one DeleteSessions locked deadlocks with it,
// and whichever of the two PostgreSQL fails runs again.
func deadlocked(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == deadlockDetected
}

// deadlockDetected is the SQLSTATE of deadlock_detected.
const deadlockDetected = "40P01"

// errRowGone rolls back an add that found a row of its keys deleted
// before it could lock it.
var errRowGone = errors.New("pgstore: a reputation record was deleted while it was locked; try again")

// addOnce is one transaction of add, on keys, sorted and without
// duplicates. It fails with errUnmet when cond's row does not read want,
// and with errRowGone when a row was deleted before it was locked: the
// deltas for it would be applied to a row that no longer exists.
func (s *ReputationStore) addOnce(ctx context.Context, horizon float64, deltas []reputation.Delta, cond *reputation.Key, want reputation.Record, keys []reputation.Key) error {
	sessions, ops, kinds := columns(keys)
	return pgx.BeginFunc(ctx, s.db.pool, func(tx pgx.Tx) error {
		// Every key gets a row, then the rows are locked in key order.
		made, err := tx.Query(ctx, `
			INSERT INTO vouch_reputation (session, operation, kind, right_n, wrong_n)
			SELECT s, o, k, 0, 0 FROM unnest($1::bigint[], $2::text[], $3::text[]) AS t(s, o, k)
			ON CONFLICT DO NOTHING
			RETURNING session, operation, kind`, sessions, ops, kinds)
		if err != nil {
			return err
		}
		created, err := pgx.CollectRows(made, func(row pgx.CollectableRow) (reputation.Key, error) {
			var k reputation.Key
			err := row.Scan(&k.Session, &k.Operation, &k.Kind)
			return k, err
		})
		if err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `
			SELECT session, operation, kind, right_n, wrong_n FROM vouch_reputation
			WHERE (session, operation, kind) IN (SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[]))
			ORDER BY session, operation COLLATE "C", kind COLLATE "C"
			FOR UPDATE`, sessions, ops, kinds)
		if err != nil {
			return err
		}
		records, err := scanRecords(rows)
		if err != nil {
			return err
		}
		if len(records) != len(keys) {
			return errRowGone
		}
		if cond != nil && records[*cond] != want {
			return errUnmet
		}
		for _, d := range deltas {
			records[d.Key] = records[d.Key].Add(d.Delta, horizon)
		}
		rights, wrongs := make([]float64, len(keys)), make([]float64, len(keys))
		for i, k := range keys {
			rights[i], wrongs[i] = records[k].Right, records[k].Wrong
		}
		if _, err := tx.Exec(ctx, `
			UPDATE vouch_reputation AS r SET right_n = t.rn, wrong_n = t.wn
			FROM unnest($1::bigint[], $2::text[], $3::text[], $4::float8[], $5::float8[]) AS t(s, o, k, rn, wn)
			WHERE r.session = t.s AND r.operation = t.o AND r.kind = t.k`,
			sessions, ops, kinds, rights, wrongs); err != nil {
			return err
		}
		if cond == nil || !slices.Contains(created, *cond) || slices.ContainsFunc(deltas, func(d reputation.Delta) bool { return d.Key == *cond }) {
			return nil
		}
		// The row was made to lock the condition only: like the other
		// stores, leave no record that nothing was added to.
		_, err = tx.Exec(ctx, `DELETE FROM vouch_reputation WHERE session = $1 AND operation = $2 AND kind = $3`,
			cond.Session, cond.Operation, cond.Kind)
		return err
	})
}

var _ reputation.SessionDeleter = (*ReputationStore)(nil)

// DeleteSessions implements reputation.SessionDeleter. It sets the
// sessions' rows to zero rather than deleting them, after locking them
// in the order Add locks its rows: an Add racing it then finds its rows
// and applies its deltas wholly before or wholly after. A row written
// after they were locked is set to zero too, out of that order; when an
// Add holds it while waiting for a row DeleteSessions locked, PostgreSQL
// fails one of the two as deadlocked, and that one runs again.
func (s *ReputationStore) DeleteSessions(ctx context.Context, sessions []int64) error {
	if err := reputation.CheckSessions(sessions); err != nil {
		return err
	}
	ctx, cancel, err := s.db.query(ctx)
	if err != nil {
		return err
	}
	defer cancel()
	for range addTries {
		err = pgx.BeginFunc(ctx, s.db.pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `
				SELECT 1 FROM vouch_reputation WHERE session = ANY($1::bigint[])
				ORDER BY session, operation COLLATE "C", kind COLLATE "C"
				FOR UPDATE`, sessions); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `
				UPDATE vouch_reputation SET right_n = 0, wrong_n = 0
				WHERE session = ANY($1::bigint[])`, sessions)
			return err
		})
		if !deadlocked(err) {
			break
		}
	}
	if err != nil {
		return fmt.Errorf("pgstore: deleting sessions' reputation: %w", err)
	}
	return nil
}

var _ reputation.PanelDeleter = (*ReputationStore)(nil)

// DeletePanel implements reputation.PanelDeleter. It locks the rows in
// the order Add locks its rows, then deletes them, so that an Add racing
// it never deadlocks with it; kinds compare byte by byte (COLLATE "C").
func (s *ReputationStore) DeletePanel(ctx context.Context, operation, before string) (int, error) {
	if err := reputation.CheckPanelDelete(operation, before); err != nil {
		return 0, err
	}
	ctx, cancel, err := s.db.query(ctx)
	if err != nil {
		return 0, err
	}
	defer cancel()
	var n int64
	err = pgx.BeginFunc(ctx, s.db.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `
			SELECT 1 FROM vouch_reputation
			WHERE session = 0 AND operation = $1 AND kind COLLATE "C" < $2 COLLATE "C"
			ORDER BY kind COLLATE "C"
			FOR UPDATE`, operation, before); err != nil {
			return err
		}
		tag, err := tx.Exec(ctx, `
			DELETE FROM vouch_reputation
			WHERE session = 0 AND operation = $1 AND kind COLLATE "C" < $2 COLLATE "C"`, operation, before)
		n = tag.RowsAffected()
		return err
	})
	if err != nil {
		return 0, fmt.Errorf("pgstore: deleting the panel's reputation: %w", err)
	}
	return int(n), nil
}

// columns splits keys into the arrays that unnest reads.
func columns(keys []reputation.Key) (sessions []int64, ops, kinds []string) {
	sessions, ops, kinds = make([]int64, len(keys)), make([]string, len(keys)), make([]string, len(keys))
	for i, k := range keys {
		sessions[i], ops[i], kinds[i] = k.Session, k.Operation, k.Kind
	}
	return sessions, ops, kinds
}

// scanRecords reads rows of (session, operation, kind, right_n, wrong_n).
func scanRecords(rows pgx.Rows) (map[reputation.Key]reputation.Record, error) {
	out := make(map[reputation.Key]reputation.Record)
	var k reputation.Key
	var r reputation.Record
	_, err := pgx.ForEachRow(rows, []any{&k.Session, &k.Operation, &k.Kind, &r.Right, &r.Wrong}, func() error {
		out[k] = r
		return nil
	})
	return out, err
}

// compareKeys orders keys as the lock query does: by session, then
// operation and kind bytewise.
func compareKeys(a, b reputation.Key) int {
	return cmp.Or(cmp.Compare(a.Session, b.Session), cmp.Compare(a.Operation, b.Operation), cmp.Compare(a.Kind, b.Kind))
}
