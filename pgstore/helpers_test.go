package pgstore_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/vouchkit/vouch/pgstore"
)

// databaseURL returns the URL of the test database. Without one the test
// is skipped, or fails when CI is set, since CI must run it.
func databaseURL(t testing.TB) string {
	t.Helper()
	url := os.Getenv("VOUCH_TEST_DATABASE_URL")
	if url == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("VOUCH_TEST_DATABASE_URL is not set, and CI is: CI must run the database tests; start a database with eval \"$(scripts/pg-test.sh start)\"")
		}
		t.Skip("VOUCH_TEST_DATABASE_URL is not set; start a database with eval \"$(scripts/pg-test.sh start)\"")
	}
	return url
}

// openDBs opens n DBs, as n servers would, on one new schema that is
// dropped when the test ends.
func openDBs(t testing.TB, n int, opts ...pgstore.Option) []*pgstore.DB {
	t.Helper()
	url := databaseURL(t)
	schema := newSchemaName(t)
	opts = append([]pgstore.Option{pgstore.WithSchema(schema)}, opts...)
	dbs := make([]*pgstore.DB, n)
	for i := range dbs {
		db, err := pgstore.Open(context.Background(), url, opts...)
		if err != nil {
			t.Fatalf("Open = %v", err)
		}
		dbs[i] = db
	}
	t.Cleanup(func() {
		_, err := dbs[0].Pool().Exec(context.Background(), "DROP SCHEMA "+pgx.Identifier{schema}.Sanitize()+" CASCADE")
		for _, db := range dbs {
			db.Close()
		}
		if err != nil {
			t.Errorf("dropping schema %s: %v", schema, err)
		}
	})
	return dbs
}

// openDB opens one DB on a new schema.
func openDB(t testing.TB, opts ...pgstore.Option) *pgstore.DB {
	t.Helper()
	return openDBs(t, 1, opts...)[0]
}

func newSchemaName(t testing.TB) string {
	b := make([]byte, 8)
	if _, err := rand.Read(b); err != nil {
		t.Fatal(err)
	}
	return "vouch_test_" + hex.EncodeToString(b)
}
