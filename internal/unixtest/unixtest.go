// Package unixtest serves an http.Handler on a Unix domain socket in
// tests, as a reverse proxy reaches a server on a socket file: the
// handler sees requests whose RemoteAddr holds no IP address.
package unixtest

import (
	"context"
	"net"
	"net/http"
	"path/filepath"
	"testing"
)

// NewServer serves h on a Unix domain socket in a temporary directory of
// t, and returns a client whose requests, whatever host their URL names,
// go to that socket. The server is closed when t ends. NewServer fails t
// when the socket cannot be made.
func NewServer(t testing.TB, h http.Handler) *http.Client {
	t.Helper()
	sock := filepath.Join(t.TempDir(), "s.sock")
	l, err := net.Listen("unix", sock)
	if err != nil {
		t.Fatalf("unixtest: %v", err)
	}
	srv := &http.Server{Handler: h}
	go srv.Serve(l)
	t.Cleanup(func() { srv.Close() })
	return &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return new(net.Dialer).DialContext(ctx, "unix", sock)
	}}}
}
