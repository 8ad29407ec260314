package pgstore_test

import (
	"context"
	"errors"
	"net/url"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/vouchkit/vouch/pgstore"
	"github.com/vouchkit/vouch/receipt"
)

// Servers starting together on an empty schema each apply the migrations
// without error, and each migration is recorded once.
func TestOpen_concurrentStarts(t *testing.T) {
	url := databaseURL(t)
	schema := newSchemaName(t)
	const n = 4
	dbs := make([]*pgstore.DB, n)
	errs := make([]error, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() { dbs[i], errs[i] = pgstore.Open(context.Background(), url, pgstore.WithSchema(schema)) })
	}
	wg.Wait()
	for i, err := range errs {
		if err != nil {
			t.Fatalf("Open %d = %v", i, err)
		}
	}
	t.Cleanup(func() {
		dbs[0].Pool().Exec(context.Background(), `DROP SCHEMA "`+schema+`" CASCADE`)
		for _, db := range dbs {
			db.Close()
		}
	})
	var applied, versions int
	err := dbs[0].Pool().QueryRow(context.Background(),
		`SELECT count(*), count(DISTINCT version_id) FROM vouch_schema_version WHERE version_id > 0`).Scan(&applied, &versions)
	if err != nil {
		t.Fatal(err)
	}
	if applied != versions || applied == 0 {
		t.Errorf("the version table records %d applications of %d migrations, want each once", applied, versions)
	}
	// Opening again applies nothing and succeeds.
	again, err := pgstore.Open(context.Background(), url, pgstore.WithSchema(schema))
	if err != nil {
		t.Fatalf("Open of an up-to-date schema = %v", err)
	}
	again.Close()
}

func TestOpen_options(t *testing.T) {
	url := databaseURL(t)
	var sized bool
	db := openDB(t, pgstore.WithQueryTimeout(time.Second), pgstore.WithPoolConfig(func(c *pgxpool.Config) {
		c.MaxConns = 3
		sized = true
	}))
	if !sized || db.Pool().Config().MaxConns != 3 {
		t.Errorf("WithPoolConfig not applied: called %v, MaxConns %d", sized, db.Pool().Config().MaxConns)
	}
	for name, opt := range map[string]pgstore.Option{
		"zero timeout":  pgstore.WithQueryTimeout(0),
		"empty schema":  pgstore.WithSchema(""),
		"negative time": pgstore.WithQueryTimeout(-time.Second),
	} {
		if db, err := pgstore.Open(context.Background(), url, opt); err == nil {
			db.Close()
			t.Errorf("Open with %s = nil error, want one", name)
		}
	}
}

// A URL that does not parse is reported with what is wrong in it, and
// without echoing it: it may hold a password.
func TestOpen_badURLNotEchoed(t *testing.T) {
	for url, why := range map[string]string{
		"postgres://vouch:s3cret@127.0.0.1:5432/db?sslmode=bogus": "sslmode is invalid",
		"postgres://vouch:s3cret@127.0.0.1:99999/db":              "invalid port",
		"postgres://vouch:s3cret@db host/db":                      "unexpected spaces",
		"host=db password=s3cret port=five":                       "invalid port",
		"mysql://vouch:s3cret@127.0.0.1/db":                       `scheme "mysql"`,
		"s3cret":                                                  "neither a postgres:// URL nor",
	} {
		_, err := pgstore.Open(context.Background(), url)
		if err == nil {
			t.Fatalf("Open(%q) = nil error", url)
		}
		if strings.Contains(err.Error(), "s3cret") || !strings.Contains(err.Error(), why) {
			t.Errorf("Open(%q): %q; want %q, and the password not echoed", url, err, why)
		}
	}
}

// Queries are bounded by the query timeout even when the caller's context
// has none.
func TestDB_queryTimeout(t *testing.T) {
	db := openDB(t, pgstore.WithQueryTimeout(50*time.Millisecond))
	conn, err := db.Pool().Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Release()
	// Hold the row's lock in an open transaction, so that a claim of the
	// same key waits for it.
	tx, err := conn.Begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(context.Background())
	if _, err := tx.Exec(context.Background(), `INSERT INTO vouch_x402_replay (key, until) VALUES ('k', now())`); err != nil {
		t.Fatal(err)
	}
	_, err = db.Replay().Reserve(context.Background(), "k", t0, t0.Add(time.Hour))
	if !errors.Is(err, context.DeadlineExceeded) && !pgconn.Timeout(err) {
		t.Errorf("Reserve blocked by a lock = %v, want a timeout", err)
	}
}

// A table whose sweep fails (here the expired receipt's row is locked
// beyond the query timeout) does not keep the other tables from being
// swept: DeleteExpired reports the error and removes the expired rows of
// every other table.
func TestDB_DeleteExpiredPastAFailingTable(t *testing.T) {
	db := openDB(t, pgstore.WithQueryTimeout(200*time.Millisecond))
	ctx := context.Background()
	rec := receipt.Record{ID: "rcpt_locked", Data: []byte(`{}`), Owner: "key:a", Visibility: receipt.VisibilityPrivate, ExpiresAt: t0.Add(time.Second)}
	if err := db.Receipts().Put(ctx, rec); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Replay().Reserve(ctx, "auth", t0, t0.Add(time.Second)); err != nil {
		t.Fatal(err)
	}
	tx, err := db.Pool().Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, `SELECT 1 FROM vouch_receipts WHERE id = $1 FOR UPDATE`, rec.ID); err != nil {
		t.Fatal(err)
	}
	n, err := db.DeleteExpired(ctx, t0.Add(time.Hour))
	if err == nil || n != 1 {
		t.Errorf("DeleteExpired with the receipts' sweep blocked = %d, %v; want 1 (the payment) and the receipts' error", n, err)
	}
	if ok, err := db.Replay().Reserve(ctx, "auth", t0, t0.Add(time.Second)); err != nil || !ok {
		t.Errorf("Reserve of the swept payment = %v, %v; want it free again", ok, err)
	}
}

// A role that owns the schema it is given but may not create schemas in
// the database (no role but the database's owner may, unless granted)
// opens the database with WithSchema: the schema exists, so Open need
// not create it.
func TestOpen_schemaOwnedByARoleWithoutCreate(t *testing.T) {
	dsn := databaseURL(t)
	ctx := context.Background()
	admin, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	schema := newSchemaName(t)
	role := schema + "_owner"
	for _, stmt := range []string{
		"CREATE ROLE " + role + " LOGIN",
		"CREATE SCHEMA " + schema + " AUTHORIZATION " + role,
	} {
		if _, err := admin.Exec(ctx, stmt); err != nil {
			t.Fatalf("%s: %v", stmt, err)
		}
	}
	t.Cleanup(func() {
		for _, stmt := range []string{"DROP SCHEMA " + schema + " CASCADE", "DROP ROLE " + role} {
			if _, err := admin.Exec(ctx, stmt); err != nil {
				t.Errorf("%s: %v", stmt, err)
			}
		}
		admin.Close(ctx)
	})
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.User(role)
	db, err := pgstore.Open(ctx, u.String(), pgstore.WithSchema(schema))
	if err != nil {
		t.Fatalf("Open by the schema's owner = %v", err)
	}
	defer db.Close()
	if _, err := db.Replay().Reserve(ctx, "auth", t0, t0.Add(time.Second)); err != nil {
		t.Errorf("Reserve in the owner's schema = %v", err)
	}
}
