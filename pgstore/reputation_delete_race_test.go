package pgstore_test

import (
	"context"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	"github.com/jackc/pgx/v5"

	"github.com/vouchkit/vouch/pgstore"
	"github.com/vouchkit/vouch/reputation"
)

// A session's record first written while DeleteSessions waits for the
// lock of another of its records, and then held by an Add that waits for
// that lock in turn, as a server teaching the session in a new scope
// does while another forgets it (Book.Identify), fails neither: of the
// two that deadlock, the one PostgreSQL fails runs again, and the Add
// lands wholly before or wholly after the deletion. The test holds the
// lock of the session's one record in a transaction of its own, lets
// DeleteSessions queue behind it, writes the session's overall record,
// lets an Add of both records queue behind the deletion, and commits.
func TestReputationStore_deleteSessionsRacingANewRecord(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	s := db.Reputation()
	op := reputation.Key{Session: 5, Operation: "validate_v3"}
	overall := reputation.Key{Session: 5} // sorts before op
	mustAddPG(t, s, reputation.Delta{Key: op, Delta: reputation.Record{Wrong: 3}})

	tx, pid := lockingTx(t, db, `SELECT 1 FROM vouch_reputation WHERE session = 5 FOR UPDATE`)
	defer tx.Rollback(ctx)
	deleted := make(chan error, 1)
	go func() { deleted <- s.DeleteSessions(ctx, []int64{5}) }()
	deleter := blockedBy(t, db, pid)

	mustAddPG(t, s, reputation.Delta{Key: overall, Delta: reputation.Record{Right: 1}})
	added := make(chan error, 1)
	go func() {
		added <- s.Add(ctx, 0, []reputation.Delta{
			{Key: overall, Delta: reputation.Record{Right: 1}},
			{Key: op, Delta: reputation.Record{Right: 1}},
		})
	}()
	blockedBy(t, db, pid, deleter)
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-deleted; err != nil {
		t.Errorf("DeleteSessions racing an Add: %v", err)
	}
	if err := <-added; err != nil {
		t.Errorf("Add racing DeleteSessions: %v", err)
	}
	got, err := s.Load(ctx, []reputation.Key{overall, op})
	if err != nil {
		t.Fatal(err)
	}
	// Both records read zero (the Add landed before the deletion) or
	// the Add's one unit each (after it).
	before, after := []reputation.Record{{}, {}}, []reputation.Record{{Right: 1}, {Right: 1}}
	if cmp.Diff(before, got) != "" && cmp.Diff(after, got) != "" {
		t.Errorf("records after an Add racing DeleteSessions = %+v, want %+v (the Add before) or %+v (after)", got, before, after)
	}
}

// DeleteSessions that PostgreSQL fails as deadlocked runs again. The
// test holds the session's one record as above; once DeleteSessions
// queues behind it, the session's overall record is written, and a
// transaction of the test's own holds it, as an Add of both records
// does. The first lock is released, DeleteSessions queues behind the
// second, and the test's transaction then asks for the first record,
// closing the cycle after DeleteSessions began waiting, so that
// PostgreSQL fails DeleteSessions.
func TestReputationStore_deleteSessionsRunsAgainAfterADeadlock(t *testing.T) {
	ctx := context.Background()
	db := openDB(t)
	s := db.Reputation()
	op := reputation.Key{Session: 5, Operation: "validate_v3"}
	overall := reputation.Key{Session: 5}
	mustAddPG(t, s, reputation.Delta{Key: op, Delta: reputation.Record{Wrong: 3}})

	first, firstPID := lockingTx(t, db, `SELECT 1 FROM vouch_reputation WHERE session = 5 FOR UPDATE`)
	defer first.Rollback(ctx)
	deleted := make(chan error, 1)
	go func() { deleted <- s.DeleteSessions(ctx, []int64{5}) }()
	blockedBy(t, db, firstPID)

	mustAddPG(t, s, reputation.Delta{Key: overall, Delta: reputation.Record{Right: 1}})
	second, secondPID := lockingTx(t, db, `SELECT 1 FROM vouch_reputation WHERE session = 5 AND operation = '' FOR UPDATE`)
	defer second.Rollback(ctx)
	if err := first.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	blockedBy(t, db, secondPID, firstPID)
	if _, err := second.Exec(ctx, `SELECT 1 FROM vouch_reputation WHERE session = 5 AND operation = 'validate_v3' FOR UPDATE`); err != nil {
		t.Fatalf("the test's transaction closing the cycle: %v", err)
	}
	if err := second.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-deleted; err != nil {
		t.Fatalf("DeleteSessions after a deadlock: %v", err)
	}
	got, err := s.Load(ctx, []reputation.Key{overall, op})
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]reputation.Record{{}, {}}, got); diff != "" {
		t.Errorf("records after DeleteSessions ran again (-want +got):\n%s", diff)
	}
}

// lockingTx begins a transaction, runs query (with args) in it and
// returns it with the pid of its backend.
func lockingTx(t *testing.T, db *pgstore.DB, query string, args ...any) (pgx.Tx, int32) {
	t.Helper()
	ctx := context.Background()
	tx, err := db.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var pid int32
	if err := tx.QueryRow(ctx, `SELECT pg_backend_pid()`).Scan(&pid); err != nil {
		tx.Rollback(ctx)
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, query, args...); err != nil {
		tx.Rollback(ctx)
		t.Fatal(err)
	}
	return tx, pid
}

// blockedBy waits until a backend other than those of skip waits for a
// lock that a backend of pids holds, and returns its pid.
func blockedBy(t *testing.T, db *pgstore.DB, pid int32, skip ...int32) int32 {
	t.Helper()
	pids := append([]int32{pid}, skip...)
	for {
		var waiting []int32
		err := db.Pool().QueryRow(context.Background(), `
			SELECT coalesce(array_agg(pid), '{}') FROM pg_stat_activity
			WHERE pg_blocking_pids(pid) && $1::int4[] AND NOT pid = ANY($1::int4[])`, pids).Scan(&waiting)
		if err != nil {
			t.Fatal(err)
		}
		if len(waiting) > 0 {
			return waiting[0]
		}
		time.Sleep(time.Millisecond)
	}
}
