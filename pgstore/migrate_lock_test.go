package pgstore_test

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/vouchkit/vouch/pgstore"
)

// Processes that name one schema differently (WithSchema, or the URL's
// search_path) take turns to migrate it: while one holds the schema's
// migration lock, the other is refused it and waits. The test blocks the
// first process's first migration on a table of the same name created
// in a transaction left open, then asks the second to migrate, and
// watches its connection: it must try the migration lock and be
// refused, never hold one of its own.
func TestOpen_namesOfOneSchemaShareTheMigrationLock(t *testing.T) {
	ctx := context.Background()
	dsn := databaseURL(t)
	schema := newSchemaName(t)
	admin, watch := connect(t, dsn), connect(t, dsn)
	if _, err := admin.Exec(ctx, `CREATE SCHEMA `+schema); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if _, err := admin.Exec(ctx, `DROP SCHEMA `+schema+` CASCADE`); err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
		}
	})
	tx, err := admin.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `CREATE TABLE `+schema+`.vouch_receipts (id text)`); err != nil {
		t.Fatal(err)
	}

	named := func(app string, params map[string]string) string {
		u, err := url.Parse(dsn)
		if err != nil {
			t.Fatal(err)
		}
		q := u.Query()
		q.Set("application_name", app)
		for k, v := range params {
			q.Set(k, v)
		}
		u.RawQuery = q.Encode()
		return u.String()
	}
	appA, appB := schema+"_a", schema+"_b"
	errs := make(chan error, 2)
	open := func(dsn string, opts ...pgstore.Option) {
		db, err := pgstore.Open(ctx, dsn, opts...)
		if err == nil {
			db.Close()
		}
		errs <- err
	}
	go open(named(appA, nil), pgstore.WithSchema(schema))
	for !poll(t, watch, `SELECT EXISTS (SELECT FROM pg_stat_activity
		WHERE application_name = $1 AND cardinality(pg_blocking_pids(pid)) > 0)`, appA) {
	}
	go open(named(appB, map[string]string{"search_path": schema}))
	for {
		if poll(t, watch, `SELECT EXISTS (SELECT FROM pg_locks JOIN pg_stat_activity USING (pid)
			WHERE application_name = $1 AND locktype = 'advisory' AND granted)`, appB) {
			t.Error("the second process took a migration lock while the first held the schema's")
			break
		}
		if poll(t, watch, `SELECT EXISTS (SELECT FROM pg_stat_activity
			WHERE application_name = $1 AND state = 'idle' AND query LIKE '%pg_try_advisory_lock%')`, appB) {
			break // tried the lock, and holds none: refused
		}
	}
	tx.Rollback(ctx)
	for range 2 {
		if err := <-errs; err != nil {
			t.Errorf("Open = %v", err)
		}
	}
}

// connect opens a connection to dsn, closed when the test ends.
func connect(t *testing.T, dsn string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(context.Background()) })
	return conn
}

// poll reports the answer of the boolean query q, after a millisecond.
func poll(t *testing.T, conn *pgx.Conn, q string, args ...any) bool {
	t.Helper()
	time.Sleep(time.Millisecond)
	var ok bool
	if err := conn.QueryRow(context.Background(), q, args...).Scan(&ok); err != nil {
		t.Fatal(err)
	}
	return ok
}
