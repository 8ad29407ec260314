package main

import (
	"context"
	"net/url"
	"strings"
	"testing"
)

// The banner's line naming the database shows neither a password in the
// URL's user nor one among its query parameters, where pgx reads one
// too.
func TestOpenDatabase_whereHidesPasswords(t *testing.T) {
	dbURL := databaseURL(t)
	schema := freshSchema(t, dbURL)
	u, err := url.Parse(dbURL)
	if err != nil {
		t.Fatal(err)
	}
	inUser := *u
	inUser.User = url.UserPassword(u.User.Username(), "s3cret-user")
	inQuery := *u
	q := inQuery.Query()
	q.Set("password", "s3cret-query")
	inQuery.RawQuery = q.Encode()
	for _, dsn := range []string{inUser.String(), inQuery.String()} {
		st, err := openDatabase(context.Background(), config{databaseURL: dsn, schema: schema}, func(error) {})
		if err != nil {
			t.Fatalf("openDatabase = %v", err)
		}
		st.close()
		if strings.Contains(st.where, "s3cret") || !strings.Contains(st.where, u.Host) {
			t.Errorf("state %q, want the host %s and no password", st.where, u.Host)
		}
	}
}
