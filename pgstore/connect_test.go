package pgstore_test

import (
	"context"
	"errors"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/vouchkit/vouch/pgstore"
)

// freeAddr returns a loopback address nothing listens on: one a listener
// held and closed.
func freeAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// TestOpen_unreachable: a database URL whose address nothing listens on
// (a wrong port) fails Open with an error that says the database cannot
// be reached, names its address and the cause, and neither blames the
// migrations or the first query nor echoes the password; the network
// error is found by errors.Is.
func TestOpen_unreachable(t *testing.T) {
	addr := freeAddr(t)
	for _, schema := range []string{"", "tenant_a"} {
		var opts []pgstore.Option
		if schema != "" {
			opts = append(opts, pgstore.WithSchema(schema))
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		_, err := pgstore.Open(ctx, "postgres://vouch:s3cret@"+addr+"/vouch?sslmode=disable", opts...)
		cancel()
		if err == nil {
			t.Fatalf("Open on %s = nil error", addr)
		}
		msg := err.Error()
		want := "pgstore: the database at " + addr + " cannot be reached: "
		if !strings.HasPrefix(msg, want) || !strings.Contains(msg, "connection refused") ||
			strings.Contains(msg, "schema") || strings.Contains(msg, "migration") || strings.Contains(msg, "s3cret") {
			t.Errorf("Open on %s with schema %q: %q; want %q and the cause (connection refused)", addr, schema, msg, want)
		}
		if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Errorf("Open: %v does not wrap ECONNREFUSED", err)
		}
	}
}
